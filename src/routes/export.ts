import type { Answer } from "../http/answer.ts";
import { EXPORT_MEDIA_TYPES, exportFileName, openExport } from "../export/export.ts";
import { singleValuedQuery } from "../http/query.ts";
import type { ApiRequest } from "../http/request.ts";
import { EXPORT_QUERY_PARAMETERS, exportQuery } from "../schemas.ts";
import { validate } from "../validate.ts";
import type { KeyedContext } from "./context.ts";

/** GET /api/submission/export: the list's filters and order, every row, streamed. */
export async function exportSubmissions(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const { format, orderBy, ...filter } = validate(exportQuery, singleValuedQuery(context.url, EXPORT_QUERY_PARAMETERS), "query");
  const body = await openExport(context.store, context.principal.accountId, {
    format,
    filter,
    order: orderBy === "created_at" ? "asc" : "desc",
  });
  return {
    status: 200,
    body,
    headers: {
      "content-type": EXPORT_MEDIA_TYPES[format],
      "content-disposition": `attachment; filename="${exportFileName(format, new Date())}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  };
}
