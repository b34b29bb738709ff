export declare function jsonResponse(body: unknown, status?: number, headers?: Record<string, string>): Response;
