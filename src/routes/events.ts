/** `GET /api/events`: the account's change log, read by cursor. */
import type { Answer } from "../http/answer.ts";
import { joinBytes } from "../bytes.ts";
import { HttpError } from "../http/errors.ts";
import { singleValuedQuery } from "../http/query.ts";
import { jsonBytesAnswer, jsonTextAnswer } from "../http/json.ts";
import type { ApiRequest } from "../http/request.ts";
import { EVENTS_QUERY_PARAMETERS, eventsQuery } from "../schemas.ts";
import { isEventLog, readEventsAsJson } from "../store.ts";
import { validate } from "../validate.ts";
import type { KeyedContext } from "./context.ts";

export const CURSOR_EXPIRED =
  "The cursor is outside the events kept: events after it were pruned, or it is ahead of this account's log (the database was restored from an earlier backup, or the cursor is another database's). Export the submissions afresh (GET /api/submission/export) and continue from a new cursor (GET /api/events without `after`, then follow nextCursor).";

export async function listEvents(_request: ApiRequest, context: KeyedContext): Promise<Answer> {
  const { after, limit, type: types, popupId } = validate(eventsQuery, singleValuedQuery(context.url, EVENTS_QUERY_PARAMETERS), "query");
  const { store } = context;
  if (!isEventLog(store)) throw new HttpError(404, "This deployment's store keeps no change log");
  const page = await readEventsAsJson(store, context.principal.accountId, { after, limit, types, popupId });
  if (page.expired) throw new HttpError(410, CURSOR_EXPIRED);
  // The events' texts as the store keeps them: a page of a thousand is written, not re-serialised.
  // bench/events.ts: a page's bytes from the database are answered without being made a string and encoded again.
  const [head, tail] = ['{"items":[', `],"nextCursor":"${page.cursor}"}`];
  if (typeof page.json === "string") return jsonTextAnswer(`${head}${page.json}${tail}`);
  return jsonBytesAnswer(joinBytes(encoder.encode(head), page.json, encoder.encode(tail)));
}

const encoder = new TextEncoder();
