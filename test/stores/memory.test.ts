import { createMemoryStore } from "../../src/stores/memory.ts";
import { testCompleteStore } from "./complete-store.ts";

const open = async (options?: { identifyingFields?: readonly string[] }) => createMemoryStore(options);
testCompleteStore("memory", open);
