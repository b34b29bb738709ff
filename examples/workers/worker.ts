// A Cloudflare Worker serving formsink from the D1 database bound as DB (see wrangler.jsonc).
export { default } from "formsink/workers";
