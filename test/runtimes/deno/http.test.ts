/** The HTTP contract against `Deno.serve` (adapters/deno.ts), and the libSQL store under Deno. */
import { serve } from "../../../adapters/deno.ts";
import { createLibsqlStore } from "../../../src/stores/libsql/index.ts";
import { overSocket } from "../../http/over-socket.ts";
import { httpSuite } from "../../http/suite.ts";
import { storeConformance } from "../../stores/conformance.ts";

httpSuite("deno server, libSQL :memory:", overSocket(serve), { createStore: () => createLibsqlStore({ url: ":memory:" }) });
storeConformance("libSQL :memory: under Deno", async () => ({ store: await createLibsqlStore({ url: ":memory:" }) }));
