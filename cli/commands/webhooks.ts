import { parseArgs } from "node:util";
import { HttpError } from "../../src/http/errors.ts";
import { beforeBound, parseInstant } from "../../src/instant.ts";
import { createWebhookBody, DELIVERY_STATUSES } from "../../src/schemas.ts";
import type { CompleteStore } from "../../src/store.ts";
import { validate } from "../../src/validate.ts";
import { addWebhook, DEFAULT_MAX_WEBHOOKS, publicDeliveryPage, publicWebhook, rotateWebhookSecret } from "../../src/webhook-endpoints.ts";
import { DATABASE_HELP, databaseUrl, openDatabase } from "../database.ts";
import { formatTable } from "../table.ts";
import { CommandError, EXIT_OK, type Io, UsageError } from "../usage.ts";

const HELP = `Manage an account's webhook endpoints in the database, as the API does (/api/webhooks).
A secret is printed once, alone on stdout.

Usage:
  formsink webhooks add --account NAME --url URL [--type TYPE]... [--popup ID] [--description TEXT] [--allow-private-webhooks]
      Subscribes URL to the account's events from now on (every type, every popup, unless
      narrowed) and prints its signing secret (whsec_...). The URL must be https and name no
      private address unless --allow-private-webhooks (or FORMSINK_ALLOW_PRIVATE_WEBHOOKS=1):
      the server must then run with the same setting, or it refuses to deliver.
  formsink webhooks list --account NAME [--json]
  formsink webhooks remove --account NAME WEBHOOK-ID
  formsink webhooks rotate-secret --account NAME WEBHOOK-ID
      Prints a new secret; the previous one keeps signing beside it for 24 hours.
  formsink webhooks deliveries --account NAME WEBHOOK-ID [--status S] [--limit N] [--cursor C] [--json]
      The delivery log, newest event first: status (pending, succeeded, failed), attempts,
      the last attempt's time, status code and error, and the next attempt's time.
  formsink webhooks retry --account NAME WEBHOOK-ID EVENT-ID
      Makes that delivery due now, a failed one too (EVENT-ID as the delivery log shows it).
  formsink webhooks replay --account NAME WEBHOOK-ID --since INSTANT
      Makes every event kept since INSTANT (such as 2026-11-23T10:00:00Z) that the endpoint
      subscribes to a delivery due now, and prints how many.

A running server sends what these queue on its next round: within its --webhook-poll
(5 seconds by default).

Options:
${DATABASE_HELP}
  -h, --help    show this help`;

const SUBCOMMANDS: Record<string, (args: string[], io: Io) => Promise<number>> = {
  add: addCommand,
  list: listCommand,
  remove: removeCommand,
  "rotate-secret": rotateCommand,
  deliveries: deliveriesCommand,
  retry: retryCommand,
  replay: replayCommand,
};

export async function webhooksCommand(args: string[], io: Io): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "--help" || name === "-h") {
    io.stdout(HELP);
    return EXIT_OK;
  }
  const subcommand = SUBCOMMANDS[name];
  if (!subcommand) throw new UsageError(`unknown webhooks command "${name}" (use ${Object.keys(SUBCOMMANDS).join(", ")})`);
  return subcommand(rest, io);
}

const commonOptions = { db: { type: "string" }, account: { type: "string" }, help: { type: "boolean", short: "h" } } as const;

interface Parsed<V> {
  values: V & { db?: string; account?: string; help?: boolean };
  positionals: string[];
}

/** Opens the database and finds the account, runs `use` with both, and closes the database. */
async function withAccount(
  command: string,
  { values }: Parsed<object>,
  io: Io,
  use: (store: CompleteStore, accountId: string) => Promise<number>,
): Promise<number> {
  if (!values.account) throw new UsageError(`webhooks ${command} needs --account NAME`);
  const store = await openDatabase(databaseUrl(values.db, io.env), io);
  try {
    const account = await store.findAccount(values.account);
    if (!account) throw new CommandError(`no account "${values.account}" (see: formsink keys list)`);
    return await use(store, account.id);
  } catch (error) {
    // The API's refusals (a bad URL, too many endpoints) say what to fix: the same words here,
    // naming the options instead of the body's fields.
    if (error instanceof HttpError) throw error.status === 400 ? new UsageError(namingOptions(error.message)) : new CommandError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

/** The positionals a subcommand takes, exactly. */
function positionals(command: string, parsed: Parsed<object>, names: string[]): string[] {
  if (parsed.positionals.length !== names.length) throw new UsageError(`webhooks ${command} needs ${names.join(" ")}`);
  return parsed.positionals;
}

function help(io: Io): number {
  io.stdout(HELP);
  return EXIT_OK;
}

async function addCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseArgs({
    args,
    options: {
      ...commonOptions,
      url: { type: "string" },
      type: { type: "string", multiple: true },
      popup: { type: "string" },
      description: { type: "string" },
      "allow-private-webhooks": { type: "boolean" },
    },
  });
  const { values } = parsed;
  if (values.help) return help(io);
  if (!values.url) throw new UsageError("webhooks add needs --url URL");
  const allowPrivateWebhooks = values["allow-private-webhooks"] === true || io.env.FORMSINK_ALLOW_PRIVATE_WEBHOOKS === "1";
  return withAccount("add", parsed, io, async (store, accountId) => {
    const given = { url: values.url, types: values.type, popupId: values.popup, description: values.description };
    const body = validate(createWebhookBody, Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)), "webhook");
    const added = await addWebhook(store, accountId, body, { maxWebhooks: DEFAULT_MAX_WEBHOOKS, allowPrivateWebhooks });
    io.stdout(added.secret);
    io.stderr(
      `Added webhook ${added.webhook.webhookId} for account "${values.account}": ${added.webhook.url}\n` +
        "The secret above signs its deliveries (webhook-signature); it is shown only this once.",
    );
    return EXIT_OK;
  });
}

async function listCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseArgs({ args, options: { ...commonOptions, json: { type: "boolean" } } });
  if (parsed.values.help) return help(io);
  return withAccount("list", parsed, io, async (store, accountId) => {
    const webhooks = (await store.listWebhooks(accountId)).map((webhook) => publicWebhook(webhook));
    if (parsed.values.json) io.stdout(JSON.stringify(webhooks, null, 2));
    else if (webhooks.length === 0) io.stderr(`No webhooks. Add one with: formsink webhooks add --account ${parsed.values.account} --url URL`);
    else {
      io.stdout(
        formatTable(
          ["ID", "URL", "TYPES", "POPUP", "DISABLED", "CREATED"],
          webhooks.map((w) => [w.webhookId, w.url, w.types?.join(",") ?? "all", w.popupId ?? "all", w.disabledAt ?? "-", w.createdAt]),
        ),
      );
    }
    return EXIT_OK;
  });
}

async function removeCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseArgs({ args, options: commonOptions, allowPositionals: true });
  if (parsed.values.help) return help(io);
  const [webhookId] = positionals("remove", parsed, ["WEBHOOK-ID"]);
  return withAccount("remove", parsed, io, async (store, accountId) => {
    if (!(await store.deleteWebhook(accountId, webhookId!))) throw noWebhook(webhookId!, parsed.values.account!);
    io.stderr(`Removed webhook ${webhookId} and its delivery log.`);
    return EXIT_OK;
  });
}

async function rotateCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseArgs({ args, options: commonOptions, allowPositionals: true });
  if (parsed.values.help) return help(io);
  const [webhookId] = positionals("rotate-secret", parsed, ["WEBHOOK-ID"]);
  return withAccount("rotate-secret", parsed, io, async (store, accountId) => {
    const rotated = await rotateWebhookSecret(store, accountId, webhookId!);
    if (!rotated) throw noWebhook(webhookId!, parsed.values.account!);
    io.stdout(rotated.secret);
    io.stderr(
      `New secret for webhook ${webhookId}, shown only this once. ` +
        `The previous one keeps signing beside it until ${publicWebhook(rotated.webhook).previousSecretExpiresAt}.`,
    );
    return EXIT_OK;
  });
}

async function deliveriesCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseArgs({
    args,
    options: { ...commonOptions, status: { type: "string" }, limit: { type: "string", default: "20" }, cursor: { type: "string" }, json: { type: "boolean" } },
    allowPositionals: true,
  });
  const { values } = parsed;
  if (values.help) return help(io);
  const [webhookId] = positionals("deliveries", parsed, ["WEBHOOK-ID"]);
  const status = values.status as (typeof DELIVERY_STATUSES)[number] | undefined;
  if (status !== undefined && !DELIVERY_STATUSES.includes(status)) throw new UsageError(`--status must be ${DELIVERY_STATUSES.join(", ")} (got "${status}")`);
  const limit = Number(values.limit);
  if (!/^\d+$/.test(values.limit) || limit < 1 || limit > 1000) throw new UsageError(`--limit must be a whole number from 1 to 1000 (got "${values.limit}")`);
  if (values.cursor !== undefined && !/^\d{1,15}$/.test(values.cursor)) throw new UsageError(`--cursor must be a cursor the last page printed (got "${values.cursor}")`);
  return withAccount("deliveries", parsed, io, async (store, accountId) => {
    if (!(await store.getWebhook(accountId, webhookId!))) throw noWebhook(webhookId!, values.account!);
    const page = await store.listDeliveries(accountId, webhookId!, { status, limit, after: values.cursor === undefined ? undefined : Number(values.cursor) });
    const { items, nextCursor } = publicDeliveryPage(page);
    if (values.json) io.stdout(JSON.stringify({ items, nextCursor }, null, 2));
    else if (items.length === 0) io.stderr("No deliveries.");
    else {
      io.stdout(
        formatTable(
          ["EVENT", "TYPE", "STATUS", "ATTEMPTS", "LAST ATTEMPT", "CODE", "NEXT ATTEMPT", "ERROR"],
          items.map((d) => [
            d.eventId, d.eventType, d.status, String(d.attempts), d.lastAttemptAt ?? "-", d.lastStatusCode === null ? "-" : String(d.lastStatusCode),
            d.nextAttemptAt ?? "-", d.lastError ?? "-",
          ]),
        ),
      );
    }
    if (nextCursor !== null && !values.json) io.stderr(`Older deliveries: add --cursor ${nextCursor}`);
    return EXIT_OK;
  });
}

async function retryCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseArgs({ args, options: commonOptions, allowPositionals: true });
  if (parsed.values.help) return help(io);
  const [webhookId, eventId] = positionals("retry", parsed, ["WEBHOOK-ID", "EVENT-ID"]);
  return withAccount("retry", parsed, io, async (store, accountId) => {
    if (!(await store.getWebhook(accountId, webhookId!))) throw noWebhook(webhookId!, parsed.values.account!);
    if (!(await store.retryDelivery(accountId, webhookId!, eventId!, Date.now()))) {
      throw new CommandError(`webhook ${webhookId} has no delivery of event ${eventId} (see: formsink webhooks deliveries)`);
    }
    io.stderr(`Queued event ${eventId} for webhook ${webhookId}: it is sent on the server's next round.`);
    return EXIT_OK;
  });
}

async function replayCommand(args: string[], io: Io): Promise<number> {
  const parsed = parseArgs({ args, options: { ...commonOptions, since: { type: "string" } }, allowPositionals: true });
  if (parsed.values.help) return help(io);
  const [webhookId] = positionals("replay", parsed, ["WEBHOOK-ID"]);
  const sinceText = parsed.values.since;
  if (sinceText === undefined) throw new UsageError("webhooks replay needs --since INSTANT, such as --since 2026-11-23T10:00:00Z");
  const since = parseInstant(sinceText);
  if (!since) throw new UsageError(`--since must be an ISO 8601 instant such as 2026-11-23T10:00:00Z (was ${JSON.stringify(sinceText)})`);
  return withAccount("replay", parsed, io, async (store, accountId) => {
    if (!(await store.getWebhook(accountId, webhookId!))) throw noWebhook(webhookId!, parsed.values.account!);
    const replayed = await store.replayDeliveries(accountId, webhookId!, beforeBound(since), Date.now());
    io.stdout(String(replayed));
    io.stderr(`Queued ${replayed} event(s) for webhook ${webhookId}: they are sent on the server's next round.`);
    return EXIT_OK;
  });
}

const OPTION_OF_FIELD: Record<string, string> = { url: "--url", types: "--type", popupId: "--popup", description: "--description" };

/** A validation message about the API's fields, about this command's options instead. */
function namingOptions(message: string): string {
  return message.replace(/(^|; )(url|types|popupId|description)(\[\d+\])?/g, (_, before: string, field: string) => before + OPTION_OF_FIELD[field]);
}

function noWebhook(webhookId: string, account: string): CommandError {
  return new CommandError(`account "${account}" has no webhook ${webhookId} (see: formsink webhooks list --account ${account})`);
}
