/**
 * The JSR package: `deno publish --dry-run` resolves every export, finds no slow types (every
 * public function and constant explicitly typed) and publishes only the library's sources.
 * Type-checking is left to `npm run typecheck` (`--no-check`): Deno cannot check the Bun adapter
 * against Bun's types, which tsconfig.bun.json does. What a JSR user's Deno checks, every other
 * entry point with Deno's own settings, is checked outside the clone.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
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

test("jsr: every entry point but ./bun passes deno check with Deno's own settings, as a JSR user's project checks it", () => {
  // Outside the clone, so that the repository's tsconfig.json (Node's types) does not apply.
  const dir = mkdtempSync(join(tmpdir(), "formsink-jsr-check-"));
  try {
    for (const path of ["src", "adapters", "jsr.json", "package.json"]) cpSync(join(ROOT, path), join(dir, path), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    const exports = (JSON.parse(readFileSync(join(ROOT, "jsr.json"), "utf8")) as { exports: Record<string, string> }).exports;
    // The Bun adapter's types are Bun's, which Deno does not have; tsconfig.bun.json checks it.
    const entries = Object.entries(exports).filter(([name]) => name !== "./bun").map(([, file]) => file);
    assert.ok(entries.length >= 10, `only ${entries.length} entry points`);
    const result = spawnSync(join(ROOT, "node_modules/.bin/deno"), ["check", "--quiet", ...entries], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1" },
    });
    assert.is(result.status, 0, result.stdout + result.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
