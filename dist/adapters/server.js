/** The shape every server adapter (Node, Bun, Deno) shares, so a host or the CLI can swap them. */
export const DEFAULT_PORT = 8787;
export const DEFAULT_HOSTNAME = "127.0.0.1";
/** The API's error body, for a failure the handler itself could not answer. */
export function internalError() {
    return Response.json({ message: "Internal server error" }, { status: 500 });
}
export function reportError(error) {
    console.error("formsink: unhandled error", error);
}
/** `http://host:port`, with IPv6 hosts in brackets. */
export function serverUrl(hostname, port) {
    return `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
}
