/**
 * An in-memory store for tests, demos and embedding. Nothing survives the process; lists are
 * computed by scanning the account's submissions (fine for thousands, not for millions).
 */
import type { SubmissionStore } from "../store.js";
export declare function createMemoryStore(): SubmissionStore;
