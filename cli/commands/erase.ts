import { parseArgs } from "node:util";
import { HttpError } from "../../src/http/errors.ts";
import { erase, erasureValueHash, publicReceipt } from "../../src/privacy/erasure.ts";
import { DATABASE_HELP, databaseUrl, openDatabase } from "../database.ts";
import { EXIT_FAILURE, EXIT_OK, type Io, UsageError } from "../usage.ts";

const ERASE_HELP = `Erase a person: delete every submission of the account whose data field holds the value
(an email ignoring case), and print the receipt as JSON. The receipt is kept without the value.

Usage:
  formsink erase --account NAME --field email --value VALUE [--dry-run]
      --dry-run counts and lists the matches, deletes nothing and keeps no receipt.

Options:
${DATABASE_HELP}
  -h, --help    show this help`;

const ERASURES_HELP = `Show an account's erasure receipts, oldest first, as JSON lines.

Usage:
  formsink erasures list --account NAME [--field email --value VALUE]
      With --field and --value, only the receipts of erasures of that value (matched by the
      receipts' keyed hash: the value itself was never kept).

Options:
${DATABASE_HELP}
  -h, --help    show this help`;

const databaseOption = { db: { type: "string" }, help: { type: "boolean", short: "h" } } as const;

export async function eraseCommand(args: string[], io: Io): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { ...databaseOption, account: { type: "string" }, field: { type: "string" }, value: { type: "string" }, "dry-run": { type: "boolean" } },
  });
  if (values.help) {
    io.stdout(ERASE_HELP);
    return EXIT_OK;
  }
  if (!values.account) throw new UsageError("erase needs --account NAME");
  if (!values.field) throw new UsageError("erase needs --field FIELD, such as --field email");
  if (!values.value) throw new UsageError("erase needs --value VALUE");
  const store = await openDatabase(databaseUrl(values.db, io.env), io);
  try {
    const account = await store.findAccount(values.account);
    if (!account) return noAccount(io, values.account);
    const result = await erase(store, account.id, { field: values.field, value: values.value, dryRun: values["dry-run"] ?? false });
    io.stdout(JSON.stringify(result, null, 2));
    io.stderr(
      result.dryRun
        ? `Dry run: ${result.matched} submission(s) would be deleted; nothing was.`
        : `Deleted ${result.deleted} submission(s); receipt ${result.erasureId}.`,
    );
    return EXIT_OK;
  } catch (error) {
    // A field the database does not index: the message names the ones it does.
    if (error instanceof HttpError && error.status === 400) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}

export async function erasuresCommand(args: string[], io: Io): Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined || name === "--help" || name === "-h") {
    io.stdout(ERASURES_HELP);
    return EXIT_OK;
  }
  if (name !== "list") throw new UsageError(`unknown erasures command "${name}" (use list)`);
  const { values } = parseArgs({ args: rest, options: { ...databaseOption, account: { type: "string" }, field: { type: "string" }, value: { type: "string" } } });
  if (values.help) {
    io.stdout(ERASURES_HELP);
    return EXIT_OK;
  }
  if (!values.account) throw new UsageError("erasures list needs --account NAME");
  if ((values.field === undefined) !== (values.value === undefined)) throw new UsageError("--field and --value go together");
  const store = await openDatabase(databaseUrl(values.db, io.env), io);
  try {
    const account = await store.findAccount(values.account);
    if (!account) return noAccount(io, values.account);
    let receipts = await store.listErasureReceipts(account.id);
    if (values.field !== undefined && values.value !== undefined) {
      const hash = await erasureValueHash(store, values.field, values.value);
      receipts = receipts.filter((receipt) => receipt.field === values.field && receipt.valueHash === hash);
    }
    for (const receipt of receipts) io.stdout(JSON.stringify(publicReceipt(receipt)));
    if (receipts.length === 0) io.stderr("No erasure receipts.");
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

function noAccount(io: Io, name: string): number {
  io.stderr(`formsink: no account "${name}" (see: formsink keys list)`);
  return EXIT_FAILURE;
}
