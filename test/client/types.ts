/**
 * Compile-time checks of the client's types, run by `npm run typecheck`: each `@ts-expect-error`
 * fails the typecheck if the line below it stops being an error, so the types cannot quietly
 * loosen. Nothing here runs.
 */
import { createClient, type Submission } from "../../src/client/index.ts";
import type { submission } from "../../src/schemas.ts";
import type { Submission as DomainSubmission } from "../../src/submission.ts";

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

// The response schema and the domain model are one type.
export const schemaMatchesModel: Same<typeof submission.infer, DomainSubmission> = true;
export const clientMatchesModel: Same<Submission, DomainSubmission> = true;

export async function typeChecks(): Promise<void> {
  const client = createClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "fs_sk_..." });
  await client.list({ limit: 5, offset: 10, status: "pending", orderBy: "created_at", createdAfter: new Date(), createdBefore: "2025-07-12T10:30:00Z" });
  // @ts-expect-error status is pending or completed
  await client.list({ status: "done" });
  // @ts-expect-error limit is a number
  await client.list({ limit: "5" });
  // @ts-expect-error orderBy is created_at or created_at_desc
  await client.listAll({ orderBy: "created" });
  // @ts-expect-error export has no limit
  client.export({ limit: 5 });
  await client.create({ popupId: "p", data: { email: "a@example.com", nested: { ok: [1, null] } }, device: "mobile" });
  // @ts-expect-error data is required
  await client.create({ popupId: "p" });
  // @ts-expect-error device is one of five
  await client.create({ popupId: "p", data: {}, device: "phone" });
  // @ts-expect-error status is set by the service
  await client.create({ popupId: "p", data: {}, status: "completed" });
  // @ts-expect-error status is pending or completed
  await client.updateStatus("id", "archived");
  const page = await client.list();
  const first: Submission | undefined = page.items[0];
  const total: number = page.total;
  void first;
  void total;
  for await (const item of client.export()) {
    const status: "pending" | "completed" = item.status;
    // @ts-expect-error submissions have no accountId
    void item.accountId;
    void status;
  }
}
