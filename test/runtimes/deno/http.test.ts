/** The HTTP contract against `Deno.serve` (adapters/deno.ts), the typed client against it, and the libSQL store under Deno. */
import { serve } from "../../../adapters/deno.ts";
import { createLibsqlStore } from "../../../src/stores/libsql/index.ts";
import { clientTarget } from "../../client/server-target.ts";
import { clientSuite } from "../../client/suite.ts";
import { overSocket } from "../../http/over-socket.ts";
import { httpSuite } from "../../http/suite.ts";
import { storeConformance } from "../../stores/conformance.ts";

httpSuite("deno server, libSQL :memory:", overSocket(serve), { createStore: () => createLibsqlStore({ url: ":memory:" }) });
storeConformance("libSQL :memory: under Deno", async () => ({ store: await createLibsqlStore({ url: ":memory:" }) }));
clientSuite("deno server", clientTarget(serve));
