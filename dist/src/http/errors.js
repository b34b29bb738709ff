import { jsonResponse } from "./json.js";
/**
 * An error that is an answer: thrown anywhere below the router and turned into
 * `{"message": ...}` with its status in exactly one place (`toErrorResponse`).
 */
export class HttpError extends Error {
    status;
    headers;
    constructor(status, message, headers = {}) {
        super(message);
        this.name = "HttpError";
        this.status = status;
        this.headers = headers;
    }
}
export const INTERNAL_ERROR_MESSAGE = "Internal server error";
/** The response for anything thrown while handling a request; unexpected errors become a bare 500. */
export function toErrorResponse(error) {
    if (error instanceof HttpError) {
        return jsonResponse({ message: error.message }, error.status, error.headers);
    }
    return jsonResponse({ message: INTERNAL_ERROR_MESSAGE }, 500);
}
