/**
 * The plain baseline of bench/baseline.ts: the list and the create written the way a user
 * would in an afternoon, with node:http and the same `libsql` binding formsink uses, on a table
 * of their own with an index per filter. The list counts its total with `COUNT(*)`; the create
 * inserts in its own synchronous transaction (`synchronous = FULL`: durable when answered).
 *
 *   node --import tsx bench/support/baseline-server.ts <database file> <api key>
 *
 * Prints its URL on stdout, then serves until killed.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Database from "libsql";

const [file, apiKey] = process.argv.slice(2);
if (!file || !apiKey) throw new Error("usage: baseline-server.ts <database file> <api key>");

const db = new Database(file);
db.exec("PRAGMA journal_mode = WAL");
db.exec("PRAGMA synchronous = FULL");

const FILTERS = ["popup_id", "domain", "device", "status"] as const;
const PARAMETERS = { popup_id: "popupId", domain: "domain", device: "device", status: "status" } as const;
const insert = db.prepare(
  "INSERT INTO submissions (id, popup_id, domain, device, user_agent, status, created_at, data) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)",
);

function send(res: import("node:http").ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) }).end(text);
}

const server = createServer((req, res) => {
  if (req.headers["x-api-key"] !== apiKey) return send(res, 401, { error: "unauthorized" });
  const url = new URL(req.url ?? "/", "http://localhost");
  if (req.method === "GET" && url.pathname === "/api/submission") {
    const where: string[] = [];
    const args: string[] = [];
    for (const column of FILTERS) {
      const value = url.searchParams.get(PARAMETERS[column]);
      if (value !== null) {
        where.push(`${column} = ?`);
        args.push(value);
      }
    }
    const limit = Math.min(Number(url.searchParams.get("limit") ?? 10), 100);
    const offset = Number(url.searchParams.get("offset") ?? 0);
    const condition = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
    const rows = db
      .prepare(`SELECT * FROM submissions ${condition} ORDER BY created_at DESC LIMIT ? OFFSET ?`)
      .all(...args, limit, offset) as { data: string }[];
    const { total } = db.prepare(`SELECT COUNT(*) AS total FROM submissions ${condition}`).get(...args) as { total: number };
    return send(res, 200, { items: rows.map((row) => ({ ...row, data: JSON.parse(row.data) as unknown })), total, limit, offset });
  }
  if (req.method === "POST" && url.pathname === "/api/submission") {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      let input: { popupId?: unknown; data?: unknown };
      try {
        input = JSON.parse(body) as typeof input;
      } catch {
        return send(res, 400, { error: "invalid JSON" });
      }
      if (typeof input.popupId !== "string" || typeof input.data !== "object" || input.data === null) return send(res, 400, { error: "popupId and data are required" });
      const submission = {
        id: crypto.randomUUID(),
        popupId: input.popupId,
        domain: new URL(req.headers.origin ?? "http://unknown").hostname,
        device: /mobile/i.test(req.headers["user-agent"] ?? "") ? "mobile" : "desktop",
        userAgent: req.headers["user-agent"] ?? "",
        status: "pending",
        createdAt: new Date().toISOString(),
        data: input.data,
      };
      insert.run(submission.id, submission.popupId, submission.domain, submission.device, submission.userAgent, submission.createdAt, JSON.stringify(submission.data));
      send(res, 201, submission);
    });
    return;
  }
  send(res, 404, { error: "not found" });
});

server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
process.once("SIGTERM", () => server.close(() => db.close()));
