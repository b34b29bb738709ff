/**
 * An in-memory store for tests, demos and embedding: nothing survives the process. It answers
 * lists from sorted indexes with maintained counts, so it stays fast at millions of
 * submissions (see README, "The memory store"); `memory/` holds how.
 */
export { createMemoryStore, type MemoryStoreOptions } from "./memory/store.ts";
