import { HttpError } from "../http/errors.js";
/**
 * The step in front of every route: the key must be present, known and unrevoked (401), and of
 * a kind the route accepts (403). It runs before the body is read, so an unauthenticated client
 * cannot make the server buffer anything.
 */
export function requireKey(authenticate, access) {
    return async (request, context) => {
        const apiKey = request.headers.get("x-api-key")?.trim();
        if (!apiKey)
            throw new HttpError(401, "API key is required");
        const principal = await authenticate(apiKey, request);
        if (!principal)
            throw new HttpError(401, "Invalid API key");
        if (principal.kind !== "secret") {
            throw new HttpError(403, access === "create"
                ? "Publishable keys cannot create submissions yet; use a secret key from your server"
                : "This operation needs a secret key");
        }
        context.principal = principal;
        return undefined;
    };
}
