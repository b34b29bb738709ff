// Prints the popup script's size as sent (gzip) and fails when it outgrows its budget.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const BUDGET_GZIP_BYTES = 4 * 1024;
const file = new URL("formsink-popup.js", import.meta.url);
const source = readFileSync(file);
const gzipped = gzipSync(source, { level: 9 }).byteLength;
console.log(`formsink-popup.js: ${source.byteLength} bytes, ${gzipped} bytes gzipped (budget ${BUDGET_GZIP_BYTES})`);
if (gzipped > BUDGET_GZIP_BYTES) {
  console.error(`formsink-popup.js is over its budget by ${gzipped - BUDGET_GZIP_BYTES} bytes gzipped`);
  process.exit(1);
}
