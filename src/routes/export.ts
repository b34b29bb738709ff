import type { Answer } from "../http/answer.ts";
import { EXPORT_MEDIA_TYPES, exportFileName, openExport } from "../export/export.ts";
import { HttpError } from "../http/errors.ts";
import { singleValuedQuery } from "../http/query.ts";
import type { ApiRequest } from "../http/request.ts";
import { CURSOR_PROBLEMS, decodeListCursor } from "../list-cursor.ts";
import { EXPORT_QUERY_PARAMETERS, exportQuery } from "../schemas.ts";
import { validate } from "../validate.ts";
import type { KeyedContext } from "./context.ts";

/**
 * GET /api/submission/export: the list's filters and order, every row, streamed; with a list
 * answer's `cursor`, every row after that page.
 */
export async function exportSubmissions(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const { format, orderBy, cursor, ...filter } = validate(exportQuery, singleValuedQuery(context.url, EXPORT_QUERY_PARAMETERS), "query");
  const order = orderBy === "created_at" ? "asc" : "desc";
  let after;
  if (cursor !== undefined) {
    const decoded = decodeListCursor(cursor, filter, order);
    if (!decoded.ok) throw new HttpError(400, CURSOR_PROBLEMS[decoded.problem]);
    after = decoded.after;
  }
  const body = await openExport(context.store, context.principal.accountId, { format, filter, order, after });
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
