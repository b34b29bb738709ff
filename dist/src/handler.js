import { Router } from "itty-router";
import { authenticateWithStore } from "./auth/store-authenticate.js";
import { HttpError, toErrorResponse } from "./http/errors.js";
import { createSubmissionIdGenerator } from "./id.js";
import { DEFAULT_LIMITS } from "./options.js";
import { requireKey } from "./routes/access.js";
import { createSubmission, deleteSubmission, getSubmission, listSubmissions, updateSubmissionStatus, } from "./routes/submissions.js";
/** Every route of the API, in one table: where a newcomer looks first. */
export const ROUTES = [
    { method: "GET", path: "/api/submission", access: "secret", handle: listSubmissions },
    { method: "POST", path: "/api/submission", access: "create", handle: createSubmission },
    { method: "GET", path: "/api/submission/:submissionId", access: "secret", handle: getSubmission },
    { method: "PATCH", path: "/api/submission/:submissionId", access: "secret", handle: updateSubmissionStatus },
    { method: "DELETE", path: "/api/submission/:submissionId", access: "secret", handle: deleteSubmission },
];
/**
 * The whole API as one Fetch handler: give it a store, mount it anywhere that speaks
 * `Request`/`Response` (Node via `formsink/node`, Bun, Deno, Workers, a Hono or Next.js route).
 */
export function createSubmissionsHandler(store, options = {}) {
    const basePath = normalizeBasePath(options.basePath ?? "");
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    const authenticate = options.authenticate ?? authenticateWithStore(store);
    const log = options.log;
    const newSubmissionId = createSubmissionIdGenerator();
    const router = Router({ base: basePath });
    for (const route of ROUTES) {
        router[route.method.toLowerCase()](route.path, requireKey(authenticate, route.access), route.handle);
    }
    for (const [path, methods] of methodsByPath(ROUTES)) {
        router.all(path, () => {
            throw new HttpError(405, `Method not allowed; use ${methods.join(", ")}`, { allow: methods.join(", ") });
        });
    }
    return async (request) => {
        const started = performance.now();
        const url = new URL(request.url);
        let response;
        try {
            response =
                (await router.fetch(request, { store, limits, basePath, url, newSubmissionId })) ??
                    toErrorResponse(new HttpError(404, "Not found"));
        }
        catch (error) {
            if (!(error instanceof HttpError))
                log?.({ type: "error", method: request.method, path: url.pathname, error });
            response = toErrorResponse(error);
        }
        log?.({
            type: "request",
            method: request.method,
            path: url.pathname,
            status: response.status,
            durationMs: performance.now() - started,
        });
        return response;
    };
}
function methodsByPath(routes) {
    const byPath = new Map();
    for (const { path, method } of routes)
        byPath.set(path, [...(byPath.get(path) ?? []), method]);
    return byPath;
}
function normalizeBasePath(basePath) {
    const trimmed = basePath.replace(/\/+$/, "");
    if (trimmed !== "" && !trimmed.startsWith("/")) {
        throw new TypeError(`basePath must start with "/" (got "${basePath}")`);
    }
    return trimmed;
}
