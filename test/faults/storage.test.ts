// Storage that fails under the server: a full disk, a database file deleted or replaced while
// serving. Each gets its own answer; nothing acknowledged is lost.
import { execFileSync } from "node:child_process";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { create, newKey, serve, suiteWithDir } from "./support.ts";

const storage = suiteWithDir("storage faults");

/** Fills the file system holding `dir` to the last byte; returns the filler file, to delete. */
function fill(dir: string): string {
  const filler = join(dir, "filler");
  try {
    execFileSync("dd", ["if=/dev/zero", `of=${filler}`, "bs=64k"], { stdio: "ignore" });
  } catch {
    // dd ends with "No space left on device": the point.
  }
  return filler;
}

storage("a full disk: writes get 507 with a clear message, reads still work, and writes work again once space is freed", async ({ dir }) => {
  assert.is(process.getuid?.(), 0, "this test mounts a small tmpfs to fill it, which needs root: run it as root (CI does)");
  const mount = join(dir, "small");
  mkdirSync(mount);
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", mount]);
  try {
    const db = `file:${join(mount, "live.db")}`;
    const key = await newKey(db);
    const server = await serve(["--db", db]);
    try {
      assert.is((await create(server.url, key, "before@example.com")).status, 201);
      const filler = fill(mount);
      let refused: Response | undefined;
      // The WAL may still have room for a few writes: write until the disk says no.
      for (let i = 0; i < 200 && refused === undefined; i++) {
        const answer = await create(server.url, key, `${"x".repeat(30_000)}-${i}@example.com`);
        if (answer.status !== 201) refused = answer;
      }
      assert.ok(refused, "the disk never filled");
      assert.is(refused!.status, 507, await refused!.clone().text());
      assert.match(((await refused!.json()) as { message: string }).message, /no space left/i);
      assert.is((await fetch(`${server.url}/api/submission?popupId=p1&limit=1`, { headers: { "x-api-key": key } })).status, 200);

      rmSync(filler);
      const after = await create(server.url, key, "after@example.com");
      assert.is(after.status, 201, await after.clone().text());
    } finally {
      await server.stop();
    }
  } finally {
    execFileSync("umount", ["-l", mount]);
  }
});

storage("the database file deleted or replaced while serving: writes and the health check get 503 and an error in the log, never an acknowledgement into a lost file", async ({ dir }) => {
  for (const fault of ["deleted", "replaced"] as const) {
    const path = join(dir, `${fault}.db`);
    const key = await newKey(`file:${path}`);
    const server = await serve(["--db", `file:${path}`, "--log-format", "json"]);
    let log = "";
    try {
      assert.is((await create(server.url, key, "before@example.com")).status, 201);
      if (fault === "deleted") rmSync(path);
      else {
        writeFileSync(`${path}.new`, "");
        renameSync(`${path}.new`, path);
      }
      const refused = await create(server.url, key, "after@example.com");
      assert.is(refused.status, 503, `${fault}: ${await refused.clone().text()}`);
      assert.match(((await refused.json()) as { message: string }).message, /deleted or replaced/);
      const health = await fetch(`${server.url}/api/health`);
      assert.is(health.status, 503, `${fault}: the health check fails too`);
    } finally {
      log = (await server.stop()).stderr;
    }
    assert.match(log, /"level":50.*deleted or replaced/, log);
  }
});

storage.run();
