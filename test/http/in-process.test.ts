/** The HTTP contract with the handler called directly: no server, no socket. */
import { createLibsqlStore } from "../../src/stores/libsql/index.ts";
import { httpSuite, type StartHttpTarget } from "./suite.ts";

const inProcess: StartHttpTarget = async (handler) => ({
  send: (request) => handler(request),
  stop: async () => {},
});

httpSuite("in-process, memory store", inProcess);
httpSuite("in-process, libSQL :memory:", inProcess, { createStore: () => createLibsqlStore({ url: ":memory:" }) });
