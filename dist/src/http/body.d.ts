export interface JsonBodyLimits {
    maxBytes: number;
    /** Deepest nesting of arrays and objects; the body itself is level 1. */
    maxNesting: number;
}
/**
 * Reads a JSON request body, refusing it with 413 as soon as it passes `maxBytes` - while it
 * streams in, not after buffering it all - and with a precise 4xx for anything that is not
 * well-formed JSON in UTF-8.
 */
export declare function readJsonBody(request: Request, limits: JsonBodyLimits): Promise<unknown>;
export declare function readBodyText(request: Request, maxBytes: number): Promise<string>;
/** `type/subtype` of a Content-Type header, lower-cased, without parameters. */
export declare function mediaType(contentType: string | null): string;
