/**
 * The JSR package: `deno publish --dry-run` resolves every export, finds no slow types (every
 * public function and constant explicitly typed) and publishes only the library's sources.
 * Type-checking is left to `npm run typecheck` (`--no-check`): Deno cannot check the Bun adapter
 * against Bun's types, which tsconfig.bun.json does.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";

const ROOT = resolve(import.meta.dirname, "../..");

test("jsr: deno publish --dry-run passes with no slow types, publishing only sources", () => {
  const result = spawnSync("node_modules/.bin/deno", ["publish", "--dry-run", "--allow-dirty", "--no-check"], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  const output = result.stdout + result.stderr; // Deno reports on stderr
  assert.is(result.status, 0, output);
  assert.match(output, /Success Dry run complete/);
  const published = [...output.matchAll(/file:\/\/(\S+) \(/g)].map((match) => match[1]!.slice(ROOT.length + 1));
  assert.ok(published.includes("src/index.ts") && published.includes("adapters/workers.ts"), output);
  assert.equal(published.filter((file) => !/^(src|adapters)\/.+\.ts$|^(README\.md|LICENSE|jsr\.json)$/.test(file)), []);
});

test.run();
