import { createMemoryStore } from "../../src/stores/memory.ts";
import { storeConformance } from "./conformance.ts";

storeConformance("memory", async () => ({ store: createMemoryStore() }));
