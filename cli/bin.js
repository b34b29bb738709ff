#!/usr/bin/env node
// The `formsink` command. It runs the TypeScript sources through tsx's loader, so a checkout
// needs no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("./main.ts");
process.exitCode = await main(process.argv.slice(2));
