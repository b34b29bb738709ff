import { parseArgs } from "node:util";
import { apiKeyPrefix } from "../../src/auth/api-key.ts";
import { checkApiKeyOptions, createApiKey, revokeApiKey } from "../../src/auth/keys.ts";
import type { ApiKeyKind } from "../../src/store.ts";
import { DATABASE_HELP, databaseUrl, openDatabase } from "../database.ts";
import { formatTable } from "../table.ts";
import { EXIT_FAILURE, EXIT_OK, type Io, UsageError } from "../usage.ts";

const HELP = `Manage API keys. Keys are stored hashed: a new key is printed once, alone on stdout.

Usage:
  formsink keys create --account NAME [--kind secret|publishable] [--domain HOST]...
      Creates a key (and the account, if it is new). Secret keys (fs_sk_...) are for servers and
      may do everything; publishable keys (fs_pk_...) are for web pages: they may only create
      submissions, from pages on their --domain list: example.com (any port), example.com:8443
      (that port), *.example.com (every subdomain, not example.com itself).
  formsink keys list [--account NAME] [--json]
      Shows prefix, kind, account, created and revoked time - never the key.
  formsink keys revoke PREFIX-OR-ID
      Revokes a key at once; requests with it fail from the next one on.

Options:
${DATABASE_HELP}
  -h, --help    show this help`;

const SUBCOMMANDS: Record<string, (args: string[], io: Io) => Promise<number>> = {
  create: createKey,
  list: listKeys,
  revoke: revokeKey,
};

export async function keysCommand(args: string[], io: Io): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "--help" || name === "-h") {
    io.stdout(HELP);
    return EXIT_OK;
  }
  const subcommand = SUBCOMMANDS[name];
  if (!subcommand) throw new UsageError(`unknown keys command "${name}" (use create, list or revoke)`);
  return subcommand(rest, io);
}

const databaseOption = { db: { type: "string" }, help: { type: "boolean", short: "h" } } as const;

async function createKey(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...databaseOption,
      account: { type: "string" },
      kind: { type: "string", default: "secret" },
      domain: { type: "string", multiple: true, default: [] },
    },
  });
  if (values.help) return help(io);
  if (!values.account) throw new UsageError("keys create needs --account NAME");
  if (values.kind !== "secret" && values.kind !== "publishable") {
    throw new UsageError(`--kind must be secret or publishable (got "${values.kind}")`);
  }
  const kind: ApiKeyKind = values.kind;
  const options = { account: values.account, kind, domains: values.domain };
  try {
    checkApiKeyOptions(options);
  } catch (error) {
    throw error instanceof RangeError ? new UsageError(error.message) : error;
  }
  const store = await openDatabase(databaseUrl(values.db, io.env), io);
  try {
    const created = await createApiKey(store, options);
    io.stdout(created.key);
    io.stderr(
      `Created ${kind} key ${created.prefix} for account "${values.account}".\n` +
        "It is shown only this once; formsink keeps only its hash. Send it in the x-api-key header.",
    );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function listKeys(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({ args, options: { ...databaseOption, account: { type: "string" }, json: { type: "boolean" } } });
  if (values.help) return help(io);
  const store = await openDatabase(databaseUrl(values.db, io.env), io);
  try {
    const keys = await store.listApiKeys({ accountName: values.account });
    const rows = keys.map((key) => ({
      prefix: apiKeyPrefix(key.kind, key.id),
      kind: key.kind,
      account: key.accountName,
      created: key.createdAt,
      revoked: key.revokedAt,
      domains: key.domains,
    }));
    if (values.json) {
      io.stdout(JSON.stringify(rows, null, 2));
    } else if (rows.length === 0) {
      io.stderr("No API keys. Create one with: formsink keys create --account NAME");
    } else {
      io.stdout(
        formatTable(
          ["PREFIX", "KIND", "ACCOUNT", "CREATED", "REVOKED", "DOMAINS"],
          rows.map((r) => [r.prefix, r.kind, r.account, r.created, r.revoked ?? "-", r.domains.join(",") || "-"]),
        ),
      );
    }
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

async function revokeKey(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: databaseOption, allowPositionals: true });
  if (values.help) return help(io);
  if (positionals.length !== 1) throw new UsageError("keys revoke needs exactly one PREFIX-OR-ID");
  const store = await openDatabase(databaseUrl(values.db, io.env), io);
  try {
    const revoked = await revokeApiKey(store, positionals[0]!);
    if (!revoked) {
      io.stderr(`formsink: no API key "${positionals[0]}" (see: formsink keys list)`);
      return EXIT_FAILURE;
    }
    io.stderr(`Revoked ${apiKeyPrefix(revoked.kind, revoked.id)} at ${revoked.revokedAt}.`);
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

function help(io: Io): number {
  io.stdout(HELP);
  return EXIT_OK;
}
