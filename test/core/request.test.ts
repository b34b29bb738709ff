import { test } from "uvu";
import * as assert from "uvu/assert";
import { bodyReadByHost } from "../../src/http/errors.ts";
import { fromFetchRequest } from "../../src/http/request.ts";

const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

test("fromFetchRequest: method, URL and headers as the Request has them", () => {
  const request = fromFetchRequest(new Request("http://x.test/api/submission?limit=5", {
    method: "POST",
    headers: [["X-Api-Key", "k"], ["Accept", "text/html"], ["Accept", "*/*"]],
    body: "{}",
  }));
  assert.is(request.method, "POST");
  assert.is(request.url, "http://x.test/api/submission?limit=5");
  assert.is(request.headers.get("x-api-key"), "k");
  assert.is(request.headers.get("accept"), "text/html, */*");
  assert.is(request.headers.get("origin"), null);
});

test("fromFetchRequest: the body up to the limit, undefined past it; read once, then a 500 naming the host app's mistake", async () => {
  const body = "x".repeat(100);
  assert.is(text(await fromFetchRequest(new Request("http://x.test/", { method: "POST", body })).readBody(100)), body);
  assert.is(await fromFetchRequest(new Request("http://x.test/", { method: "POST", body })).readBody(99), undefined);
  assert.is(text(await fromFetchRequest(new Request("http://x.test/")).readBody(10)), "");
  const request = fromFetchRequest(new Request("http://x.test/", { method: "POST", body }));
  await request.readBody(1000);
  try {
    await request.readBody(1000);
    assert.unreachable("a second read");
  } catch (error) {
    assert.equal(error, bodyReadByHost());
  }
});

test("fromFetchRequest: a streamed body is given up as soon as it passes the limit, not read to its end", async () => {
  let pulled = 0;
  let cancelled = false;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(1024));
    },
    cancel() {
      cancelled = true;
    },
  }, { highWaterMark: 0 });
  const request = new Request("http://x.test/", { method: "POST", body: endless, duplex: "half" } as RequestInit);
  assert.is(await fromFetchRequest(request).readBody(10 * 1024), undefined);
  assert.ok(pulled <= 12, `${pulled} chunks pulled`);
  assert.ok(cancelled, "the stream was cancelled");
});

test.run();
