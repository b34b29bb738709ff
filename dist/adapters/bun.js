/**
 * Bun adapter: `Bun.serve` runs the handler as it is (Bun speaks Request/Response natively);
 * this only adds the shared options and a graceful close.
 */
import { DEFAULT_HOSTNAME, DEFAULT_PORT, internalError, reportError, serverUrl, } from "./server.js";
export async function serve(handler, options = {}) {
    const onError = options.onError ?? reportError;
    const server = Bun.serve({
        port: options.port ?? DEFAULT_PORT,
        hostname: options.hostname ?? DEFAULT_HOSTNAME,
        fetch: (request) => handler(request),
        error(error) {
            onError(error);
            return internalError();
        },
    });
    return {
        server,
        url: serverUrl(server.hostname ?? DEFAULT_HOSTNAME, server.port ?? 0),
        async close(timeoutMs = 10_000) {
            const force = setTimeout(() => void server.stop(true), timeoutMs);
            await server.stop();
            clearTimeout(force);
        },
    };
}
