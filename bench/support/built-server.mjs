/**
 * The `--import` of every benchmark server process (load.ts `startServerProcess`): formsink's
 * own modules come from dist/, as a user's `npm install formsink` runs them, not from src/
 * through tsx, whose esbuild `keepNames` wraps every function made at run time in a call that
 * names it (bench/README.md, Method). The server scripts of bench/support/ and the cli/ modules
 * they import, which dist/ holds only bundled, are stripped of their types by esbuild without
 * `keepNames`, as the build does.
 */
import { register } from "node:module";

register(new URL("./built-server-hooks.mjs", import.meta.url));
