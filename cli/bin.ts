#!/usr/bin/env node
// The `formsink` command. Published as one bundled file (dist/cli/bin.js, made by
// scripts/after-build.mjs); in a checkout `npm start` runs this source through tsx. Bun and
// Deno run it too, serving with their own servers.
import { main } from "./main.ts";

process.exitCode = await main(process.argv.slice(2));
