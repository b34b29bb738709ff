/**
 * The floor server of bench/floors.ts: the least a server can do for each of the HTTP targets on
 * formsink's own libSQL file (its schema, its data), with node:http and the same `libsql`
 * binding. Nothing in it is formsink's: no routing, validation beyond the target's, change log,
 * idempotency or rate limits; the API key is compared with the one it was started with (a cached
 * lookup that no revocation reaches).
 *
 * - `GET /api/submission?popupId=&status=`: page 1 (10 rows, newest first) by one prepared
 *   statement over the popup's index, and its total from the maintained counts
 *   (`submission_counts`), not `COUNT(*)`.
 * - `GET /api/submission/<id>`: one prepared statement by primary key.
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

const COLUMNS = "id, popup_id, data, domain, user_agent, device, status, created_at";
const page = reader
  .prepare(`SELECT ${COLUMNS} FROM submissions INDEXED BY submissions_by_popup WHERE account_id = ? AND popup_id = ? AND status = ? ORDER BY created_at DESC, id DESC LIMIT 10`)
  .raw(true);
const total = reader.prepare("SELECT coalesce(sum(n), 0) FROM submission_counts WHERE account_id = ? AND popup_id = ? AND status = ?").raw(true).pluck(true);
const byId = reader.prepare(`SELECT ${COLUMNS} FROM submissions WHERE account_id = ? AND id = ?`).raw(true);

type Row = [string, string, string, string, string, string, string, number];

/** A row as the API's submission JSON; `data` is the JSON text as stored, written as it is. */
function itemJson(row: Row): string {
  return (
    `{"submissionId":"${row[0]}","popupId":${JSON.stringify(row[1])},"data":${row[2]},"domain":${JSON.stringify(row[3])},` +
    `"userAgent":${JSON.stringify(row[4])},"device":"${row[5]}","status":"${row[6]}","createdAt":"${new Date(row[7]).toISOString()}"}`
  );
}

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
}

// The writer: a connection of its own whose BEGIN and COMMIT wait on the binding's threads.
const writer = new AsyncDatabase(file, {});
const writerReady = writer.exec("PRAGMA synchronous = FULL");
const insert = writer.prepare(
  "INSERT INTO submissions (account_id, id, popup_id, domain, device, user_agent, status, created_at, data, plain_text) VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, 1)",
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
    const row: Row = [id, input.popupId, data, "", userAgent, device, "pending", now];
    waiting.push({ res, args: [account, id, input.popupId, "", device, userAgent, now, data], answer: itemJson(row) });
    if (!committing) void commitGroup();
  });
}

const PREFIX = "/api/submission";
const server = createServer((req, res) => {
  if (req.headers["x-api-key"] !== apiKey) return send(res, 401, '{"error":"unauthorized"}');
  const url = req.url ?? "/";
  if (req.method === "POST" && url === PREFIX) return create(req, res);
  if (req.method !== "GET") return send(res, 404, '{"error":"not found"}');
  if (url.startsWith(`${PREFIX}/`)) {
    const row = byId.get(account, url.slice(PREFIX.length + 1)) as Row | undefined;
    return row ? send(res, 200, itemJson(row)) : send(res, 404, '{"error":"not found"}');
  }
  if (url.startsWith(`${PREFIX}?`)) {
    const query = new URLSearchParams(url.slice(PREFIX.length + 1));
    const popupId = query.get("popupId");
    const status = query.get("status");
    if (popupId === null || status === null) return send(res, 400, '{"error":"popupId and status are required"}');
    const rows = page.all(account, popupId, status) as Row[];
    const count = total.get(account, popupId, status) as number;
    return send(res, 200, `{"items":[${rows.map(itemJson).join(",")}],"total":${count},"limit":10,"offset":0}`);
  }
  send(res, 404, '{"error":"not found"}');
});

server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
process.once("SIGTERM", () =>
  server.close(() => {
    reader.close();
    writer.close();
  }),
);
