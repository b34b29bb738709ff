// `formsink serve`'s settings: every flag, its env twin and its config file key refuse a bad
// value at start, naming the source actually used; flag > env > config file > default.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { BadValue, resolveSettings, setting } from "../../cli/config.ts";
import { SERVE_SETTINGS } from "../../cli/commands/serve.ts";
import { collect, waitForOutput } from "../support/process.ts";
import { FORMSINK, runHere } from "./run.ts";

/** A bad value for every serve setting: a new setting fails here until it has one. */
const BAD: Record<keyof typeof SERVE_SETTINGS, string[]> = {
  port: ["abc", "65536", "-1", "8787.5", ""],
  host: ["a b", "", "http://x"],
  db: ["mysql://x", "formsink.db", ""],
  trustProxy: ["yes", "-1", "100", ""],
  rateLimits: ["redis", "Memory", ""],
  logFormat: ["xml", "JSON", ""],
  metrics: ["everywhere", "99999", "host:", ""],
  idleTimeout: ["0", "1.5", "1000", "soon", ""],
  maxConnections: ["0", "-5", "many", ""],
  eventRetentionDays: ["0", "thirty", "-1", "1.5", ""],
  allowPrivateWebhooks: ["maybe", "2"],
  webhookLease: ["15", "3601", "a minute", "1.5", ""],
  endpointConcurrency: ["0", "65", "four", "1.5", ""],
  webhookPoll: ["0", "3601", "often", "0.5", ""],
};

const config = suite<{ dir: string }>("serve settings");

config.before.each((context) => {
  context.dir = mkdtempSync(join(tmpdir(), "formsink-config-"));
});
config.after.each(({ dir }) => rmSync(dir, { recursive: true, force: true }));

const quoted = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

config("every setting has a bad-value case here", () => {
  assert.equal(Object.keys(BAD).sort(), Object.keys(SERVE_SETTINGS).sort());
});

config("a bad value from a flag, an env var or the config file: exit 2, one line naming that source", async ({ dir }) => {
  for (const [name, values] of Object.entries(BAD)) {
    const s = SERVE_SETTINGS[name as keyof typeof SERVE_SETTINGS];
    for (const value of values) {
      const file = join(dir, "config.json");
      writeFileSync(file, JSON.stringify({ [s.flag]: value }));
      // A switch takes no text on the command line and a JSON boolean in the file (the switch test below).
      const cases: [string[], Record<string, string>, string][] = s.kind === "switch" ? [[["serve"], { [s.env]: value }, s.env]] : [
        [["serve", `--${s.flag}=${value}`], {}, `--${s.flag}`],
        [["serve"], { [s.env]: value }, s.env],
        [["serve", "--config", file], {}, `${s.flag} in config file ${file}`],
        [["serve"], { FORMSINK_CONFIG: file }, `${s.flag} in config file ${file}`],
      ];
      for (const [args, env, source] of cases) {
        const what = `${args.join(" ")} ${JSON.stringify(env)}`;
        const result = await runHere(args, env);
        assert.is(result.code, 2, `${what}: ${result.stderr}`);
        assert.match(result.stderr, new RegExp(`^formsink: ${quoted(source)} must .*\\(got "${quoted(value)}"\\)\\n`), what);
        assert.is(result.stdout, "", what);
      }
    }
  }
});

config("a bad value is refused even where a higher source overrides it", async ({ dir }) => {
  const file = join(dir, "config.json");
  writeFileSync(file, JSON.stringify({ port: "http" }));
  const shadowedEnv = await runHere(["serve", "--port", "0"], { PORT: "abc" });
  assert.is(shadowedEnv.code, 2);
  assert.match(shadowedEnv.stderr, /^formsink: PORT must be/);
  const shadowedFile = await runHere(["serve", "--config", file], { PORT: "0" });
  assert.is(shadowedFile.code, 2);
  assert.match(shadowedFile.stderr, /^formsink: port in config file .* must be/);
});

config("unknown flags, arguments, config keys and unreadable config files: exit 2 with a clear message", async ({ dir }) => {
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const cases: [string[], Record<string, string>, RegExp][] = [
    [["serve", "--prot", "1"], {}, /^formsink: Unknown option '--prot'/],
    [["serve", "8787"], {}, /^formsink: unexpected argument "8787"/],
    [["serve", "--config", write("unknown.json", '{"prot": 1}')], {}, /^formsink: config file .*unknown\.json: unknown key "prot" \(known: port, host, db, trust-proxy, rate-limits/],
    [["serve", "--config", write("broken.json", '{"port": ')], {}, /^formsink: config file .*broken\.json is not valid JSON/],
    [["serve", "--config", write("array.json", "[1]")], {}, /^formsink: config file .*array\.json must hold a JSON object/],
    [["serve", "--config", write("typed.json", '{"port": true}')], {}, /^formsink: config file .*typed\.json: "port" must be a JSON string or number \(got true\)/],
    [["serve", "--config", join(dir, "missing.json")], {}, /^formsink: cannot read the config file \(--config .*missing\.json\): ENOENT/],
    [["serve"], { FORMSINK_CONFIG: join(dir, "missing.json") }, /^formsink: cannot read the config file \(FORMSINK_CONFIG=.*missing\.json\): ENOENT/],
    [["serve", "--config", dir], {}, /^formsink: cannot read the config file \(--config .*\): EISDIR/],
  ];
  for (const [args, env, message] of cases) {
    const result = await runHere(args, env);
    assert.is(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message, args.join(" "));
  }
});

config("precedence: flag, then env var, then config file, then default", ({ dir }) => {
  const file = join(dir, "config.json");
  writeFileSync(file, JSON.stringify({ port: 7000, host: "0.0.0.0", "trust-proxy": 2, "rate-limits": "database" }));
  const { values } = resolveSettings(SERVE_SETTINGS, ["--port", "9000", "--config", file], {
    PORT: "8000", HOST: "::1", FORMSINK_DATA_DIR: dir, FORMSINK_EVENT_RETENTION_DAYS: "7", FORMSINK_ALLOW_PRIVATE_WEBHOOKS: "1", FORMSINK_ENDPOINT_CONCURRENCY: "8",
    FORMSINK_WEBHOOK_POLL: "30",
  });
  assert.equal(values, {
    port: 9000, host: "::1", db: `file:${join(dir, "formsink.db")}`, trustProxy: 2, rateLimits: "database", logFormat: undefined, metrics: undefined,
    idleTimeout: 30, maxConnections: 1000, eventRetentionDays: 7, allowPrivateWebhooks: true, webhookLease: 60, endpointConcurrency: 8,
    webhookPoll: 30,
  });
  const defaults = resolveSettings(SERVE_SETTINGS, [], {});
  assert.equal(defaults.values, {
    port: 8787, host: "127.0.0.1", db: "file:formsink.db", trustProxy: 0, rateLimits: "memory", logFormat: undefined, metrics: undefined,
    idleTimeout: 30, maxConnections: 1000, eventRetentionDays: 30, allowPrivateWebhooks: false, webhookLease: 60, endpointConcurrency: 4,
    webhookPoll: 5,
  });
});

config("a switch setting: on as a bare flag, true/false in env and file, anything else refused", ({ dir }) => {
  const table = {
    metrics: setting({ flag: "metrics", env: "TEST_METRICS", kind: "switch", default: () => false, defaultText: "off", help: "", parse: (text) => text === "true" }),
  };
  assert.is(resolveSettings(table, ["--metrics"], {}).values.metrics, true);
  assert.is(resolveSettings(table, [], { TEST_METRICS: "1" }).values.metrics, true);
  assert.is(resolveSettings(table, [], { TEST_METRICS: "false" }).values.metrics, false);
  writeFileSync(join(dir, "on.json"), '{"metrics": true}');
  assert.is(resolveSettings(table, ["--config", join(dir, "on.json")], {}).values.metrics, true);
  assert.throws(() => resolveSettings(table, [], { TEST_METRICS: "maybe" }), /^TEST_METRICS must be true or false \(got "maybe"\)$/);
  writeFileSync(join(dir, "text.json"), '{"metrics": "yes"}');
  assert.throws(() => resolveSettings(table, ["--config", join(dir, "text.json")], {}), /"metrics" must be a JSON boolean/);
  assert.ok(new BadValue("x") instanceof Error);
});

config("serve --help lists every setting with its env var and default, from the same table", async () => {
  const help = (await runHere(["serve", "--help"])).stdout;
  for (const s of [...Object.values(SERVE_SETTINGS), { flag: "config", env: "FORMSINK_CONFIG", defaultText: "none" }]) {
    assert.match(help, new RegExp(`--${s.flag}\\b[\\s\\S]*?default: ${quoted(s.defaultText)}; env ${s.env}\\n`), s.flag);
  }
});

config("docs/cli.md's table of formsink serve has a row for every setting: its flag, env var and config key", () => {
  const page = readFileSync(new URL("../../docs/cli.md", import.meta.url), "utf8");
  const start = page.indexOf("\n## formsink serve\n");
  const rows = page.slice(start, page.indexOf("\n## ", start + 1)).split("\n").filter((line) => line.startsWith("| `--"));
  for (const s of Object.values(SERVE_SETTINGS)) {
    const row = rows.find((line) => line.startsWith(`| \`--${s.flag}\``) || line.startsWith(`| \`--${s.flag} `));
    assert.ok(row, `docs/cli.md has no row for --${s.flag}`);
    assert.ok(row.includes(`| \`${s.env}\` |`) && row.includes(`| \`${s.flag}\` |`), `docs/cli.md's row for --${s.flag} names ${s.env} and the config key ${s.flag}`);
  }
});

config("a config file serves: its port is used and the database location is printed absolute", async ({ dir }) => {
  const file = join(dir, "formsink.json");
  writeFileSync(file, JSON.stringify({ port: 0, db: `file:${join(dir, "from-file.db")}` }));
  const server = spawn(process.execPath, [...FORMSINK, "serve", "--config", file], { cwd: dir });
  const exited = collect(server);
  const [, url, db] = await waitForOutput(server, "stdout", /serving (http:\/\/\S+) \(database (\S+),/);
  server.kill("SIGTERM");
  assert.match(url!, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.is(db, `file:${join(dir, "from-file.db")}`);
  assert.is((await exited).code, 0);
});

config("the default database: FORMSINK_DATA_DIR, else systemd's STATE_DIRECTORY, else the working directory", async ({ dir }) => {
  for (const sub of ["data", "state", "other"]) mkdirSync(join(dir, sub));
  const made = async (env: Record<string, string>) => {
    const result = await runHere(["keys", "create", "--account", "a"], env);
    assert.is(result.code, 0, result.stderr);
    return JSON.parse((await runHere(["keys", "list", "--json"], env)).stdout).length as number;
  };
  assert.is(await made({ STATE_DIRECTORY: `${join(dir, "state")}:${join(dir, "other")}` }), 1);
  assert.is(await made({ FORMSINK_DATA_DIR: join(dir, "data"), STATE_DIRECTORY: join(dir, "state") }), 1);
  assert.is(await made({ STATE_DIRECTORY: join(dir, "state") }), 2);
  assert.is(await made({ FORMSINK_DB: `file:${join(dir, "other", "x.db")}`, FORMSINK_DATA_DIR: join(dir, "data") }), 1);

  // The served location is printed, absolute, for a relative FORMSINK_DATA_DIR too.
  const server = spawn(process.execPath, [...FORMSINK, "serve", "--port", "0"], { cwd: dir, env: { ...process.env, FORMSINK_DATA_DIR: "data" } });
  const exited = collect(server);
  const [, db] = await waitForOutput(server, "stdout", /\(database (\S+),/);
  server.kill("SIGTERM");
  assert.is(db, `file:${join(dir, "data", "formsink.db")}`);
  assert.is((await exited).code, 0);
});

config.run();
