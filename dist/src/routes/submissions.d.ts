import { type RequestContext, type RouteRequest } from "./context.js";
export declare function listSubmissions(_request: RouteRequest, context: RequestContext): Promise<Response>;
export declare function getSubmission(request: RouteRequest, context: RequestContext): Promise<Response>;
export declare function createSubmission(request: RouteRequest, context: RequestContext): Promise<Response>;
export declare function updateSubmissionStatus(request: RouteRequest, context: RequestContext): Promise<Response>;
export declare function deleteSubmission(request: RouteRequest, context: RequestContext): Promise<Response>;
