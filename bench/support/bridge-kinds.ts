/** The servers the Node bridge benchmark compares, by the name it prints. */
export const BRIDGE_KINDS = ["raw node:http", "formsink adapters/node.ts", "@hono/node-server", "@hono/node-server (globals kept)", "srvx"] as const;
export type BridgeKind = (typeof BRIDGE_KINDS)[number];
