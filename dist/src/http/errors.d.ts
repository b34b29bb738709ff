/**
 * An error that is an answer: thrown anywhere below the router and turned into
 * `{"message": ...}` with its status in exactly one place (`toErrorResponse`).
 */
export declare class HttpError extends Error {
    readonly status: number;
    readonly headers: Record<string, string>;
    constructor(status: number, message: string, headers?: Record<string, string>);
}
export declare const INTERNAL_ERROR_MESSAGE = "Internal server error";
/** The response for anything thrown while handling a request; unexpected errors become a bare 500. */
export declare function toErrorResponse(error: unknown): Response;
