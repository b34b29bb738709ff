const BASE_HEADERS = {
    "content-type": "application/json",
    // API answers are per key and often personal data: never cached by a browser or proxy.
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
};
const encoder = new TextEncoder();
export function jsonResponse(body, status = 200, headers = {}) {
    const bytes = encoder.encode(JSON.stringify(body));
    // A known length lets servers skip chunked encoding and clients pre-size their buffers.
    return new Response(bytes, {
        status,
        headers: { ...BASE_HEADERS, "content-length": String(bytes.byteLength), ...headers },
    });
}
