#!/usr/bin/env node
// The `formsink` command. Published compiled (dist/cli/bin.js); in a checkout `npm start`
// runs this source through tsx. Bun and Deno run it too, serving with their own servers.
import { main } from "./main.ts";

process.exitCode = await main(process.argv.slice(2));
