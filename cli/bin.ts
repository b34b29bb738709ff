#!/usr/bin/env node
// The `formsink` command. Published as one bundled file (dist/cli/bin.js, made by
// scripts/after-build.mjs); in a checkout `npm start` runs this source through tsx. Bun and
// Deno run it too, serving with their own servers.
import { main } from "./main.ts";

// The database holds personal data and webhook secrets, and backups and exports copy them:
// nothing formsink writes is readable by other users of the machine (SQLite gives the -wal and
// -shm files the database's mode). What the group may read stays the operator's umask's.
process.umask(process.umask(0o077) | 0o007);

process.exitCode = await main(process.argv.slice(2));
