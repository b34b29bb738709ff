/**
 * Deno adapter: `Deno.serve` runs the handler as it is; this only adds the shared options and
 * a graceful close. Run with `--allow-net --allow-env --allow-sys --allow-ffi` for the libSQL
 * store (README: what `--allow-ffi` means for the sandbox).
 */
import { DEFAULT_HOSTNAME, DEFAULT_PORT, internalError, reportError, serverUrl, } from "./server.js";
export async function serve(handler, options = {}) {
    const onError = options.onError ?? reportError;
    const server = Deno.serve({
        port: options.port ?? DEFAULT_PORT,
        hostname: options.hostname ?? DEFAULT_HOSTNAME,
        onListen: () => { }, // Deno would print "Listening on ..." to stdout otherwise
        onError(error) {
            onError(error);
            return internalError();
        },
    }, (request) => handler(request));
    return {
        server,
        url: serverUrl(server.addr.hostname, server.addr.port),
        async close(timeoutMs = 10_000) {
            // Deno has no way to cut connections short: after the timeout, stop waiting for them.
            let timer;
            const timeout = new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)));
            await Promise.race([server.shutdown(), timeout]);
            clearTimeout(timer);
        },
    };
}
