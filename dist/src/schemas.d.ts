import { type SubmissionData } from "./submission.js";
export declare const submissionStatus: import("arktype/internal/variants/string.ts").StringType<"completed" | "pending", {}>;
export declare const device: import("arktype/internal/variants/string.ts").StringType<"bot" | "desktop" | "mobile" | "tablet" | "unknown", {}>;
export declare const LIST_QUERY_PARAMETERS: readonly ["limit", "offset", "popupId", "domain", "device", "status", "orderBy", "createdAfter", "createdBefore"];
export declare const listQuery: import("arktype/internal/variants/object.ts").ObjectType<{
    limit: (In: import("arktype/internal/attributes.ts").Default<string, "10">) => import("arktype/internal/attributes.ts").To<number>;
    offset: (In: import("arktype/internal/attributes.ts").Default<string, "0">) => import("arktype/internal/attributes.ts").To<number>;
    popupId?: string | undefined;
    domain?: string | undefined;
    device?: string | undefined;
    status?: "completed" | "pending" | undefined;
    orderBy: import("arktype/internal/attributes.ts").Default<"created_at" | "created_at_desc", "created_at_desc">;
    createdAfter?: ((In: string) => import("arktype").Out<number>) | undefined;
    createdBefore?: ((In: string) => import("arktype").Out<number>) | undefined;
}, {}>;
export declare const createSubmissionBody: import("arktype/internal/variants/object.ts").ObjectType<{
    popupId: string;
    data: SubmissionData;
    domain?: string | undefined;
    device?: "bot" | "desktop" | "mobile" | "tablet" | "unknown" | undefined;
    userAgent?: string | undefined;
}, {}>;
export declare const statusUpdateBody: import("arktype/internal/variants/object.ts").ObjectType<{
    status: "completed" | "pending";
}, {}>;
export type ListQuery = typeof listQuery.infer;
export type CreateSubmissionBody = typeof createSubmissionBody.infer;
export type StatusUpdateBody = typeof statusUpdateBody.infer;
