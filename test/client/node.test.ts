/** The typed client against the Node server, on a real socket, with and without a base path. */
import { serve } from "../../adapters/node.ts";
import { clientTarget } from "./server-target.ts";
import { clientSuite } from "./suite.ts";

clientSuite("node server", clientTarget(serve));
clientSuite("node server under /forms", clientTarget(serve), { basePath: "/forms" });
