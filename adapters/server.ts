/** The shape every server adapter (Node, Bun, Deno) shares, so a host or the CLI can swap them. */
import { INTERNAL_ERROR_MESSAGE } from "../src/http/errors.ts";
import type { ConnectionInfo } from "../src/rate-limit/client-address.ts";

export type { ConnectionInfo };

/** A Fetch handler; `connection` says where the request came from (the client's address). */
export type FetchHandler = (request: Request, connection: ConnectionInfo) => Response | Promise<Response>;

export interface ServeOptions {
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Default `127.0.0.1`: reachable from this machine only. Use `0.0.0.0` to listen on every interface. */
  hostname?: string;
  /** Told about a failure the handler did not turn into a response (a bug); default: stderr. */
  onError?: (error: unknown) => void;
  /**
   * A connection that sends and receives nothing for this long is closed, so that silent or
   * stalled clients cannot hold the server's file descriptors. Node and Bun (Bun rounds to whole
   * seconds, at most 255). Default 30 s.
   */
  idleTimeoutMs?: number;
  /**
   * Connections open at once; past it, a new connection is closed at once, so that the server
   * keeps descriptors for its database and its other clients. Node only. Default 1000.
   */
  maxConnections?: number;
}

export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_CONNECTIONS = 1000;

export interface RunningServer {
  /** `http://host:port` it listens on. */
  url: string;
  /**
   * Stops accepting connections, lets in-flight requests finish, and resolves when they have,
   * the handlers of requests whose client went away included: a store can be closed after it
   * (forcing connections closed and no longer waiting after `timeoutMs`, default 10 s).
   */
  close(timeoutMs?: number): Promise<void>;
}

export const DEFAULT_PORT = 8787;
export const DEFAULT_HOSTNAME = "127.0.0.1";

/** The API's error body, for a failure the handler itself could not answer. */
export function internalError(): Response {
  return Response.json({ message: INTERNAL_ERROR_MESSAGE }, { status: 500 });
}

export function reportError(error: unknown): void {
  console.error("formsink: unhandled error", error);
}

/** `http://host:port`, with IPv6 hosts in brackets. */
export function serverUrl(hostname: string, port: number): string {
  return `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
}

/** Waits for `work`, at most `ms`: when the time runs out first, calls `onTimeout` and returns. */
export async function waitAtMost(work: Promise<unknown>, ms: number, onTimeout?: () => void): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      onTimeout?.();
      resolve();
    }, ms);
  });
  try {
    await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
