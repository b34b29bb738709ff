/**
 * `close()` as RunningServer promises it (adapters/server.ts), in every runtime's own server:
 * an in-flight request finishes and close() resolves only after it, and the handler of a request
 * whose client went away has finished before close() resolves, so that the caller can close the
 * store after it. Runtime-agnostic: Node, Bun and Deno each pass their `serve`.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { within } from "../support/within.ts";
import type { Serve } from "./over-socket.ts";

/** A handler held at a gate until `release`: `reached` resolves when a request reaches it. */
export function gatedHandler() {
  const events: string[] = [];
  let entered!: () => void;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const handler = async () => {
    entered();
    await gate;
    events.push("handler finished");
    return new Response("finished", { status: 200 });
  };
  return { events, reached, release, handler };
}

/** Lets the server run what it has queued (its close included) before the test looks. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 200));

export function gracefulCloseSuite(name: string, serve: Serve): void {
  const t = suite(`${name}: graceful close`);
  t("close() resolves after the in-flight request has its answer", async () => {
    const { events, reached, release, handler } = gatedHandler();
    const server = await serve(handler, { port: 0 });
    try {
      const answer = fetch(`${server.url}/slow`).then(async (response) => ({ status: response.status, body: await response.text() }));
      await within(reached, 5_000, "the request reaching the handler");
      // A timeout far beyond the guards: close() must resolve on its own, not by force.
      const closing = server.close(120_000).then(() => events.push("closed"));
      await settle();
      assert.equal(events, [], "close() resolved while a request was in flight");
      release();
      assert.equal(await within(answer, 5_000, "the in-flight request"), { status: 200, body: "finished" });
      await within(closing, 5_000, "close()");
      assert.equal(events, ["handler finished", "closed"]);
    } finally {
      release();
      await within(server.close(1_000).catch(() => {}), 5_000, "close() again");
    }
  });

  t("close() waits for the handler of a request whose client went away", async () => {
    const { events, reached, release, handler } = gatedHandler();
    const server = await serve(handler, { port: 0 });
    try {
      const abort = new AbortController();
      const answer = fetch(`${server.url}/slow`, { method: "POST", body: "x", signal: abort.signal }).catch(() => "aborted");
      await within(reached, 5_000, "the request reaching the handler");
      abort.abort();
      assert.is(await within(answer, 5_000, "the aborted request"), "aborted");
      const closing = server.close(120_000).then(() => events.push("closed"));
      await settle();
      assert.equal(events, [], "close() resolved while a handler was still running");
      release();
      await within(closing, 5_000, "close()");
      assert.equal(events, ["handler finished", "closed"]);
    } finally {
      release();
      await within(server.close(1_000).catch(() => {}), 5_000, "close() again");
    }
  });

  t.run();
}
