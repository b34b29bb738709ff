/**
 * The floor server of bench/floors.ts: the least a server can do for each of the HTTP targets on
 * formsink's own libSQL file (its schema, its data), with node:http and the same `libsql`
 * binding. Nothing in it is formsink's: no routing, validation beyond the target's, change log,
 * idempotency or rate limits; the API key is compared with the one it was started with (a cached
 * lookup that no revocation reaches).
 *
 * - `GET /api/submission?popupId=&status=`: page 1 (10 rows, newest first, over the popup's
 *   index) and its total from the maintained counts (`submission_counts`, not `COUNT(*)`), in
 *   one prepared statement that returns the items' JSON as one text, as formsink's does.
 * - `GET /api/submission/<id>`: one prepared statement by primary key, the row's JSON as one text.
 * - `POST /api/submission`: parses the JSON body, inserts the row (formsink's triggers keep the
 *   counts the list's total reads) and answers 201 once its commit is on disk: the creates that
 *   arrive while a commit is in flight go into the next one (group commit), whose BEGIN and
 *   COMMIT run on the binding's threads (`libsql/promise`, `synchronous = FULL`), so the event
 *   loop reads requests while a commit syncs, as formsink's writer does.
 *
 *   node --import tsx bench/support/floor-server.ts <database file> <api key>
 *
 * Prints its URL on stdout, then serves until SIGTERM.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import Database from "libsql";
import AsyncDatabase from "libsql/promise";

const [file, apiKey] = process.argv.slice(2);
if (!file || !apiKey) throw new Error("usage: floor-server.ts <database file> <api key>");

const reader = new Database(file);
reader.exec("PRAGMA journal_mode = WAL; PRAGMA cache_size = -32768"); // formsink's reader cache: 32 MB
// The file has one account: the bench's key's.
const { account_id: account } = reader.prepare("SELECT account_id FROM api_keys LIMIT 1").get() as { account_id: string };

/**
 * A row as the API's submission JSON, written by SQLite (one text, where the row's values as JS
 * values would cost the binding a call each), up to its time, which follows as epoch
 * milliseconds: JavaScript writes it in ISO form (`withTime`), cheaper than SQLite's strftime.
 * The text fields go in unquoted when SQLite found them plain at insert (formsink's
 * `plain_text`), quoted by json_quote otherwise.
 */
const ITEM = `CASE WHEN plain_text THEN
  printf('{"submissionId":"%s","popupId":"%s","data":%s,"domain":"%s","userAgent":"%s","device":"%s","status":"%s","createdAt":"%d',
    id, popup_id, data, domain, user_agent, device, status, created_at)
  ELSE printf('{"submissionId":%s,"popupId":%s,"data":%s,"domain":%s,"userAgent":%s,"device":%s,"status":"%s","createdAt":"%d',
    json_quote(id), json_quote(popup_id), data, json_quote(domain), json_quote(user_agent), json_quote(device), status, created_at) END`;
/** The page's items joined by char(30), which no JSON text holds raw, and its total: one statement, one snapshot. */
const page = reader
  .prepare(
    `SELECT (SELECT coalesce(sum(n), 0) FROM submission_counts WHERE account_id = ?1 AND popup_id = ?2 AND status = ?3),
      group_concat(item, char(30)) FROM (SELECT ${ITEM} AS item FROM submissions INDEXED BY submissions_by_popup
      WHERE account_id = ?1 AND popup_id = ?2 AND status = ?3 ORDER BY created_at DESC, id DESC LIMIT 10)`,
  )
  .raw(true);
const byId = reader.prepare(`SELECT ${ITEM} FROM submissions WHERE account_id = ? AND id = ?`).raw(true);

/** An item of ITEM's with its time written: the digits after its last quote are the epoch milliseconds. */
function withTime(item: string): string {
  const time = item.lastIndexOf('"') + 1;
  return `${item.slice(0, time)}${new Date(Number(item.slice(time))).toISOString()}"}`;
}

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
}

// The writer: a connection of its own whose BEGIN and COMMIT wait on the binding's threads.
const writer = new AsyncDatabase(file, {});
const writerReady = writer.exec("PRAGMA synchronous = FULL");
const insert = writer.prepare(
  "INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data, plain_text) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
) as Promise<{ run(args: unknown[]): unknown }>;

interface Create {
  res: ServerResponse;
  args: unknown[];
  answer: string;
}
let waiting: Create[] = [];
let committing = false;

/** Commits every create waiting, in one transaction, then answers them; then the next group, if any. */
async function commitGroup(): Promise<void> {
  committing = true;
  const group = waiting;
  waiting = [];
  await writerReady;
  const statement = await insert;
  await writer.exec("BEGIN IMMEDIATE");
  for (const create of group) statement.run(create.args);
  await writer.exec("COMMIT");
  for (const create of group) send(create.res, 201, create.answer);
  committing = false;
  if (waiting.length > 0) void commitGroup();
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
/** A UUIDv7 of now, as formsink makes ids: ascending, so inserts go to the index's right edge. */
function uuidv7(millis: number): string {
  const time = millis.toString(16).padStart(12, "0");
  const r = randomBytes(10);
  const h = (i: number) => HEX[r[i]!]!;
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${h(0).slice(1)}${h(1)}-${HEX[0x80 | (r[2]! & 0x3f)]}${h(3)}-${h(4)}${h(5)}${h(6)}${h(7)}${h(8)}${h(9)}`;
}

function create(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    let input: { popupId?: unknown; data?: unknown };
    try {
      input = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof input;
    } catch {
      return send(res, 400, '{"error":"invalid JSON"}');
    }
    if (typeof input.popupId !== "string" || typeof input.data !== "object" || input.data === null) return send(res, 400, '{"error":"popupId and data are required"}');
    const now = Date.now();
    const id = uuidv7(now);
    const userAgent = req.headers["user-agent"] ?? "";
    const device = /mobile/i.test(userAgent) ? "mobile" : "desktop";
    const data = JSON.stringify(input.data);
    const popupText = JSON.stringify(input.popupId);
    const userAgentText = JSON.stringify(userAgent);
    // Plain when JSON needs no escape in them: what the list's ITEM writes unquoted.
    const plain = popupText.length === input.popupId.length + 2 && userAgentText.length === userAgent.length + 2 ? 1 : 0;
    const answer =
      `{"submissionId":"${id}","popupId":${popupText},"data":${data},"domain":"","userAgent":${userAgentText},` +
      `"device":"${device}","status":"pending","createdAt":"${new Date(now).toISOString()}"}`;
    waiting.push({ res, args: [account, id, input.popupId, "", device, userAgent, now, data, plain], answer });
    if (!committing) void commitGroup();
  });
}

/**
 * `GET /fixed/list` and `GET /fixed/get`: a list's and a get's answer as this server writes
 * them, made once: what the same answer costs Node without SQLite (bench/floors.ts's split of a
 * floor between HTTP and the database).
 */
const FIXED: Record<string, string> = {};

const PREFIX = "/api/submission";
const server = createServer((req, res) => {
  if (req.headers["x-api-key"] !== apiKey) return send(res, 401, '{"error":"unauthorized"}');
  const url = req.url ?? "/";
  if (req.method === "POST" && url === PREFIX) return create(req, res);
  if (req.method !== "GET") return send(res, 404, '{"error":"not found"}');
  const fixed = FIXED[url];
  if (fixed !== undefined) return send(res, 200, fixed);
  if (url.startsWith(`${PREFIX}/`)) {
    const row = byId.get(account, url.slice(PREFIX.length + 1)) as [string] | undefined;
    return row === undefined ? send(res, 404, '{"error":"not found"}') : send(res, 200, withTime(row[0]));
  }
  if (url.startsWith(`${PREFIX}?`)) {
    const query = new URLSearchParams(url.slice(PREFIX.length + 1));
    const popupId = query.get("popupId");
    const status = query.get("status");
    if (popupId === null || status === null) return send(res, 400, '{"error":"popupId and status are required"}');
    return send(res, 200, listAnswer(popupId, status));
  }
  send(res, 404, '{"error":"not found"}');
});

function listAnswer(popupId: string, status: string): string {
  const [total, items] = page.get(account, popupId, status) as [number, string | null];
  const texts = items === null ? "" : items.split("\x1e").map(withTime).join(",");
  return `{"items":[${texts}],"total":${total},"limit":10,"offset":0}`;
}

// popup_3's pending leads: a page of middling size in the bench's data.
FIXED["/fixed/list"] = listAnswer("popup_3", "pending");
const newest = byId.get(account, (reader.prepare("SELECT id FROM submissions WHERE account_id = ? ORDER BY created_at DESC LIMIT 1").raw(true).get(account) as [string])[0]) as [string];
FIXED["/fixed/get"] = withTime(newest[0]);

server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
process.once("SIGTERM", () =>
  server.close(() => {
    reader.close();
    writer.close();
  }),
);
