import { createMemoryStore } from "../../src/stores/memory.ts";
import { testCompleteStore } from "./complete-store.ts";

testCompleteStore("memory", async (options) => createMemoryStore(options));
