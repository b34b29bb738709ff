import type { Answer } from "../http/answer.ts";
import { jsonAnswer } from "../http/json.ts";
import type { SubmissionStore } from "../store.ts";
import type { ApiRequest } from "../http/request.ts";
import type { RequestContext } from "./context.ts";

/** No submission has this id: reading it costs the store one indexed lookup that finds nothing. */
const NIL_ID = "00000000-0000-0000-0000-000000000000";

/**
 * `GET /api/health`: 200 when the store answers a trivial query within the handler's health
 * timeout, else 503. Load balancers and container health checks poll it; a store that hangs must
 * give a 503 in time, not a request that hangs with it.
 */
export async function checkHealth(_request: ApiRequest, context: RequestContext): Promise<Answer> {
  const outcome = await settleWithin(pingStore(context.store), context.healthTimeoutMs);
  if (outcome === "answered") return jsonAnswer({ status: "ok" });
  const message = outcome === "failed"
    ? "the store failed a trivial query"
    : `the store did not answer within ${context.healthTimeoutMs} ms`;
  return jsonAnswer({ status: "unavailable", message }, 503);
}

/** The store's own `ping` when it has one, else a read of a submission that cannot exist. */
function pingStore(store: SubmissionStore): Promise<unknown> {
  return store.ping ? store.ping() : store.getSubmission(NIL_ID, NIL_ID);
}

function settleWithin(work: Promise<unknown>, timeoutMs: number): Promise<"answered" | "failed" | "timed out"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timed out">((resolve) => {
    timer = setTimeout(() => resolve("timed out"), timeoutMs);
  });
  const settled = work.then(() => "answered" as const, () => "failed" as const);
  return Promise.race([settled, timedOut]).finally(() => clearTimeout(timer));
}
