// `npm run build:binary`: the `formsink` command as one linux-x64 executable (dist/formsink), made
// by `bun build --compile` from the bundled bin (dist/cli/bin.js, which `npm run build` makes:
// it already holds every runtime adapter, which the CLI picks by a computed import).
//
// libSQL's native addon is embedded: `libsql` (and `libsql/promise`, the file store's write
// connection) picks it with `require(\`@libsql/${target}\`)`,
// which no bundler can follow, so this build replaces that one call with a static require of the
// linux-x64 glibc addon, which Bun embeds and, at start, writes to $TMPDIR to load it.
// The bundled bin loads libsql and arktype (a file beside it, dist/cli/arktype.cjs) with
// `createRequire(import.meta.url)` (scripts/after-build.mjs says why), which Bun's bundler does
// not follow either: this build makes those plain `require`s.
// Run with Bun: bun scripts/build-binary.ts [--outfile PATH]
import { parseArgs } from "node:util";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { outfile: { type: "string", default: "dist/formsink" } } });
const NATIVE_REQUIRE = "require(`@libsql/${target}`)";
const BUNDLE_REQUIRE = /createRequire\d*\(import\.meta\.url\)\("(libsql(?:\/promise)?)"\)/g;
// arktype is a file beside the bin, required the same way (scripts/after-build.mjs says why).
const ARKTYPE_REQUIRE = /createRequire\d*\(import\.meta\.url\)\("\.\/arktype\.cjs"\)/g;

const result = await Bun.build({
  // The webhook deliveries' thread is a file of its own, which the binary must hold too.
  entrypoints: ["dist/cli/bin.js", "dist/cli/webhook-worker.js"],
  compile: { target: "bun-linux-x64", outfile: values.outfile },
  minify: true,
  plugins: [
    {
      name: "libsql-native-addon",
      setup(build) {
        build.onLoad({ filter: /[\\/]dist[\\/]cli[\\/][\w-]+\.js$/ }, async ({ path }) => {
          const source = await Bun.file(path).text();
          if (source.match(BUNDLE_REQUIRE) === null) throw new Error(`${path} no longer loads libsql with createRequire: update scripts/build-binary.ts`);
          return { contents: source.replace(BUNDLE_REQUIRE, 'require("$1")').replace(ARKTYPE_REQUIRE, 'require("./arktype.cjs")'), loader: "js" };
        });
        build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/](index|promise)\.js$/ }, async ({ path }) => {
          const source = await Bun.file(path).text();
          if (!source.includes(NATIVE_REQUIRE)) throw new Error(`${path} no longer loads its addon with ${NATIVE_REQUIRE}: update scripts/build-binary.ts`);
          return { contents: source.replace(NATIVE_REQUIRE, 'require("@libsql/linux-x64-gnu/index.node")'), loader: "js" };
        });
      },
    },
  ],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  process.exit(1);
}
console.error(`wrote ${values.outfile}`);
