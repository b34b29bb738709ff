#!/usr/bin/env node
// The package's `formsink` command: it runs the built CLI, dist/cli/bin.js. npm links a command
// only if its file exists when the package is installed, and `npx formsink` in a checkout
// installs the checkout into npx's cache once, keeping what it linked: were the command
// dist/cli/bin.js itself, one `npx formsink` before the first build would leave that entry with
// no command in it for good. This file is always there, and says what to do until the build is.
import { existsSync } from "node:fs";

const built = new URL("../dist/cli/bin.js", import.meta.url);
if (!existsSync(built)) {
  console.error("formsink is not built in this checkout yet: run `npm run build` (or `npm start`) first.");
  process.exit(1);
}
await import(built.href);
