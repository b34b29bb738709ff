/**
 * Settings of a long-running command (`formsink serve`) in one table: each setting is a flag, an
 * environment variable and a key of the optional JSON config file, with one parser, one default
 * and one help line. A value is taken from the flag, else the environment, else the config file,
 * else the default. A value that does not parse is refused naming where it came from, even when
 * a higher source overrides it.
 *
 * The config file is JSON because the runtimes read it without a dependency (TOML or YAML would
 * need a parser in the tree of every app that embeds formsink).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { UsageError } from "./usage.ts";

/** Thrown by a parser: the message says what the value must be ("must be a port ..."). */
export class BadValue extends Error {
  override name = "BadValue";
}

/** A parser of whole numbers written in 1 to `digits` digits and from `min` to `max`; else `message`. */
export function wholeNumber(digits: number, min: number, max: number, message: string): (text: string) => number {
  return (text) => {
    const value = /^\d+$/.test(text) && text.length <= digits ? Number(text) : NaN;
    if (!(value >= min && value <= max)) throw new BadValue(message);
    return value;
  };
}

export interface Setting<T> {
  /** The flag without its dashes, which is also the config file's key. */
  flag: string;
  env: string;
  /** A switch (`--metrics`) takes no value on the command line; true or false elsewhere. */
  kind?: "value" | "switch";
  /** For the help: `<n>` in `--port <n>`. */
  valueName?: string;
  /** The value when no source gives one, from the environment (a default location may depend on it). */
  default: (env: Env) => T;
  /** The default as the help shows it. */
  defaultText: string;
  /** Lines of help, without the default and the env name (added from the fields above). */
  help: string;
  /** The value from its text; throws BadValue. A switch's parser gets "true" or "false". */
  parse: (text: string) => T;
}

type Env = Record<string, string | undefined>;
type Values<Table> = { [Name in keyof Table]: Table[Name] extends Setting<infer T> ? T : never };

export interface Resolved<Table> {
  values: Values<Table>;
  help: boolean;
}

/** Defines a setting with its type inferred from its parser. */
export function setting<T>(definition: Setting<T>): Setting<T> {
  return definition;
}

const CONFIG_FLAG = "config";
const CONFIG_ENV = "FORMSINK_CONFIG";

/**
 * The values of `table` from `args`, `env` and the config file named by `--config` or
 * FORMSINK_CONFIG. Unknown flags, unknown config keys and bad values throw UsageError.
 */
export function resolveSettings<Table extends Record<string, Setting<unknown>>>(table: Table, args: string[], env: Env): Resolved<Table> {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {
    [CONFIG_FLAG]: { type: "string" },
    help: { type: "boolean", short: "h" },
  };
  for (const s of Object.values(table)) options[s.flag] = { type: s.kind === "switch" ? "boolean" : "string" };
  const { values: flags, positionals } = parseArgs({ args, options, strict: true, allowPositionals: true });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (flags.help) return { values: {} as Values<Table>, help: true };

  const file = readConfigFile(table, flags[CONFIG_FLAG] as string | undefined, env);
  const values: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(table)) {
    const given: [string | undefined, string][] = [
      [flags[s.flag] === undefined ? undefined : String(flags[s.flag]), `--${s.flag}`],
      [env[s.env], s.env],
      [file?.settings[s.flag], `${s.flag} in config file ${file?.path}`],
    ];
    // Every value given is checked, also one a higher source overrides: it is wrong all the same.
    const parsed = given.flatMap(([text, source]) => (text === undefined ? [] : [parseFrom(s, text, source)]));
    values[name] = parsed.length > 0 ? parsed[0] : s.default(env);
  }
  return { values: values as Values<Table>, help: false };
}

function parseFrom<T>(s: Setting<T>, text: string, source: string): T {
  try {
    return s.parse(s.kind === "switch" ? switchText(text) : text);
  } catch (error) {
    if (error instanceof BadValue) throw new UsageError(`${source} ${error.message} (got "${text}")`);
    throw error;
  }
}

function switchText(text: string): string {
  if (/^(1|true|yes|on)$/i.test(text)) return "true";
  if (/^(0|false|no|off)?$/i.test(text)) return "false";
  throw new BadValue("must be true or false");
}

/** The config file's settings as text, keyed by flag; undefined when there is no file. */
function readConfigFile(table: Record<string, Setting<unknown>>, flag: string | undefined, env: Env) {
  const path = flag ?? env[CONFIG_ENV];
  if (path === undefined) return undefined;
  const named = flag !== undefined ? `--${CONFIG_FLAG} ${path}` : `${CONFIG_ENV}=${path}`;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read the config file (${named}): ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`config file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`config file ${path} must hold a JSON object such as {"port": 8787}`);
  }
  const known = new Map(Object.values(table).map((s) => [s.flag, s]));
  const settings: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    const s = known.get(key);
    if (s === undefined) {
      throw new UsageError(`config file ${path}: unknown key "${key}" (known: ${[...known.keys()].join(", ")})`);
    }
    const expected = s.kind === "switch" ? "boolean" : ["string", "number"];
    if (!expected.includes(typeof value)) {
      throw new UsageError(`config file ${path}: "${key}" must be a JSON ${s.kind === "switch" ? "boolean" : "string or number"} (got ${JSON.stringify(value)})`);
    }
    settings[key] = String(value);
  }
  return { path, settings };
}

/** The help lines of `table`, plus `--config`, each with its default and env name. */
export function settingsHelp(table: Record<string, Setting<unknown>>): string {
  const config = 'a JSON file of settings keyed by flag name, such as {"port": 8080, "trust-proxy": 1}';
  return [...Object.values(table).map(settingHelp), helpEntry(`--${CONFIG_FLAG} <file>`, config, "none", CONFIG_ENV)].join("\n");
}

/** One setting's help: the flag, what it does, then its default and env name on a line of their own. */
export function settingHelp(s: Setting<unknown>): string {
  return helpEntry(`--${s.flag}${s.kind === "switch" ? "" : ` ${s.valueName ?? "<value>"}`}`, s.help, s.defaultText, s.env);
}

const HELP_INDENT = " ".repeat(16);

function helpEntry(head: string, help: string, defaultText: string, env: string): string {
  const body = [...help.split("\n"), `default: ${defaultText}; env ${env}`];
  const first = head.length <= 12 ? [`  ${head.padEnd(12)}  ${body.shift()}`] : [`  ${head}`];
  return [...first, ...body.map((line) => `${HELP_INDENT}${line}`)].join("\n");
}
