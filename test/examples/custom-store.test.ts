/**
 * examples/custom-store: a store with only the required core passes the suite that
 * `formsink/testing` exports (imported by package name: the built dist/, as a third party gets
 * it), and its server answers creates, lists and exports through the fallbacks.
 */
import { spawn } from "node:child_process";
import { createSubmissionsHandler } from "formsink";
import { testSubmissionStore } from "formsink/testing";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createArrayStore } from "../../examples/custom-store/array-store.ts";
import { collect, waitForOutput } from "../support/process.ts";

const contract = suite("custom store: formsink/testing");
testSubmissionStore({ test: contract, open: async () => createArrayStore() });
contract.run();

const mounted = suite("custom store: mounted");

mounted("a store without keys needs options.authenticate, and says so when it is missing", () => {
  assert.throws(() => createSubmissionsHandler(createArrayStore()), (error: unknown) => error instanceof TypeError && /options\.authenticate/.test(String(error)));
  assert.type(createSubmissionsHandler(createArrayStore(), { authenticate: async () => undefined }), "function");
});

mounted("the example server stores, lists and exports with the host's key", async () => {
  const KEY = "example-key-7f3a";
  const child = spawn(process.execPath, ["--import", "tsx", "examples/custom-store/server.ts"], { env: { ...process.env, PORT: "0", FORMS_API_KEY: KEY } });
  const exited = collect(child);
  try {
    const url = (await waitForOutput(child, "stdout", /listening on (http:\/\/\S+)/))[1]!;
    const headers = { "x-api-key": KEY, "content-type": "application/json" };
    for (const data of [{ email: "a@example.com" }, { email: "b@example.com", name: "B" }]) {
      const created = await fetch(`${url}/api/submission`, { method: "POST", headers, body: JSON.stringify({ popupId: "popup_1", data }) });
      assert.is(created.status, 201, await created.clone().text());
    }
    const list = (await (await fetch(`${url}/api/submission?orderBy=created_at`, { headers })).json()) as { total: number };
    assert.is(list.total, 2);
    // CSV columns come from the listDataKeys fallback, rows from walkSubmissions
    const csv = await (await fetch(`${url}/api/submission/export?format=csv`, { headers })).text();
    assert.match(csv.split("\r\n")[0]!, /data\.email.*data\.name/);
    assert.is(csv.trim().split("\r\n").length, 3);
    const ndjson = await (await fetch(`${url}/api/submission/export?format=ndjson`, { headers })).text();
    assert.equal(ndjson.trim().split("\n").map((line) => (JSON.parse(line) as { data: unknown }).data).length, 2);
    assert.is((await fetch(`${url}/api/submission`, { headers: { "x-api-key": "wrong" } })).status, 401);
  } finally {
    child.kill("SIGTERM");
    const { stderr } = await exited;
    assert.not.match(stderr, /error/i, stderr);
  }
});

mounted.run();
