import { HttpError } from "./errors.js";
/**
 * Reads a JSON request body, refusing it with 413 as soon as it passes `maxBytes` - while it
 * streams in, not after buffering it all - and with a precise 4xx for anything that is not
 * well-formed JSON in UTF-8.
 */
export async function readJsonBody(request, limits) {
    const contentType = request.headers.get("content-type");
    if (mediaType(contentType) !== "application/json") {
        throw new HttpError(415, "Content-Type must be application/json");
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? "")?.[1]?.toLowerCase();
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
        throw new HttpError(415, `Content-Type charset must be utf-8 (got ${charset || "an empty one"})`);
    }
    // The body is read as sent; a compressed one would be taken for garbled JSON.
    const encoding = request.headers.get("content-encoding")?.trim().toLowerCase();
    if (encoding && encoding !== "identity") {
        throw new HttpError(415, `Content-Encoding ${encoding} is not supported; send the body uncompressed`);
    }
    const text = await readBodyText(request, limits.maxBytes);
    if (text.trim() === "")
        throw new HttpError(400, "Request body is empty; expected a JSON object");
    let value;
    try {
        value = JSON.parse(text);
    }
    catch {
        throw new HttpError(400, "Request body is not valid JSON");
    }
    checkJsonValue(value, limits.maxNesting);
    return value;
}
export async function readBodyText(request, maxBytes) {
    const tooLarge = () => new HttpError(413, `Request body must be at most ${maxBytes} bytes`);
    const declared = request.headers.get("content-length");
    if (declared !== null && Number(declared) > maxBytes)
        throw tooLarge();
    if (request.body === null)
        return "";
    const reader = request.body.getReader();
    const chunks = [];
    let received = 0;
    for (;;) {
        const { done, value } = await reader.read();
        if (done)
            break;
        received += value.byteLength;
        if (received > maxBytes) {
            await reader.cancel().catch(() => { });
            throw tooLarge();
        }
        chunks.push(value);
    }
    const bytes = new Uint8Array(received);
    let offset = 0;
    for (const chunk of chunks) {
        bytes.set(chunk, offset);
        offset += chunk.byteLength;
    }
    try {
        return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    }
    catch {
        throw new HttpError(400, "Request body is not valid UTF-8");
    }
}
/** `type/subtype` of a Content-Type header, lower-cased, without parameters. */
export function mediaType(contentType) {
    return (contentType ?? "").split(";", 1)[0].trim().toLowerCase();
}
/**
 * Refuses what no schema should ever see:
 * - nesting past `maxNesting`: a few KB of brackets nest thousands of levels, and validators
 *   and serialisers recurse (arktype describes the value it refuses);
 * - lone UTF-16 surrogates smuggled in through JSON escapes: SQLite would store them as
 *   U+FFFD, silently changing the data.
 * The walk keeps its own stack, and each entry only a link to its parent, so neither the call
 * stack nor path strings grow with the depth.
 */
function checkJsonValue(root, maxNesting) {
    const pending = [{ value: root, key: "", depth: 0, parent: undefined }];
    for (let visit = pending.pop(); visit !== undefined; visit = pending.pop()) {
        if (typeof visit.value === "string") {
            if (!visit.value.isWellFormed())
                throw illFormedText(visit);
            continue;
        }
        if (typeof visit.value !== "object" || visit.value === null)
            continue;
        const depth = visit.depth + 1;
        if (depth > maxNesting)
            throw new HttpError(400, `Request body is nested more than ${maxNesting} levels deep`);
        for (const [key, value] of Object.entries(visit.value)) {
            const child = { value, key, depth, parent: visit };
            if (!key.isWellFormed())
                throw illFormedText(child);
            pending.push(child);
        }
    }
}
function illFormedText(visit) {
    const keys = [];
    for (let at = visit; at?.parent !== undefined; at = at.parent)
        keys.push(at.key);
    return new HttpError(400, `Request body has text that is not valid Unicode (a lone surrogate) at ${keys.reverse().join(".") || "the top level"}`);
}
