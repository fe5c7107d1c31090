// Builds the runtime:
//   1. precompiles the JSON Schemas (scripts/gen-validators.mjs);
//   2. bundles the CLI into dist/cli/: code-split by dynamic import (each command and each
//      lazily loaded subsystem is its own chunk), then each chunk converted to CommonJS and
//      written as one function expression taking CommonJS's arguments, so a command loads only
//      the chunks it reaches. bin/runx.cjs loads them itself, through per-chunk V8 code caches
//      (Node 20 has no module compile cache, and compiling the runtime on every start would
//      dominate a command's start-up time);
//   3. bundles dist/help.cjs, the command catalog alone, so `--help` reads nothing else, and
//      writes dist/cli/build.json (build id, command names) for bin/runx.cjs;
//   4. bundles the library entry dist/index.js (ESM) for the API server, the javascript
//      runner's host script dist/javascript-host.js and the verification worker
//      dist/verify-worker.cjs.
import { build, transform } from "esbuild";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
execFileSync(process.execPath, [join(root, "scripts", "gen-validators.mjs")], { stdio: "inherit" });
rmSync(join(root, "dist"), { recursive: true, force: true });

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: "node",
  target: "node20",
  external: [],
  legalComments: "none",
  minify: true,
  // Non-ASCII characters as escapes: bin/runx.cjs reads CLI chunks as latin1.
  charset: "ascii",
  logLevel: "warning",
};

// CommonJS has no import.meta; give bundled code a file URL for its own location, computed
// when first read (few chunks ever read it, and a command loads dozens of chunks), and its
// folder as CommonJS's own __dirname (no URL round trip: the state store's first open looks
// up its migrations and the SQLite addon from there, and Node's first file-URL conversion
// costs a command ~1 ms).
const cjs = {
  ...common,
  format: "cjs",
  define: { "import.meta.url": "__runx_import_meta.url", "import.meta.dirname": "__dirname" },
  banner: {
    js: 'const __runx_import_meta = { get url() { return (this.href ??= require("node:url").pathToFileURL(__filename).href); } };',
  },
  outExtension: { ".js": ".cjs" },
};

// The CLI: ESM code splitting first (esbuild splits only ESM), then every chunk becomes a
// CommonJS file (imports → require, dynamic import() → a lazy require) that the code-cache
// loader in bin/runx.cjs compiles.
const split = await build({
  ...common,
  format: "esm",
  splitting: true,
  define: cjs.define,
  entryPoints: { main: "src/cli/main.ts" },
  outdir: join(root, "dist", "cli"),
  chunkNames: "[name]-[hash]",
  write: false,
});
mkdirSync(join(root, "dist", "cli"), { recursive: true });
// Identifies this build's chunks (bin/runx.cjs keeps packs of chunks only for the build that
// wrote them): every chunk's name and bytes.
const buildHash = createHash("sha256");
for (const file of split.outputFiles) {
  const converted = await transform(file.text, {
    format: "cjs",
    platform: "node",
    target: "node20",
    minify: true,
    legalComments: "none",
    supported: { "dynamic-import": false },
    charset: "ascii",
    banner: cjs.banner.js,
  });
  // bin/runx.cjs reads chunks as latin1: they must be ASCII.
  if (/[\u0080-\uffff]/.test(converted.code)) throw new Error(`${file.path}: non-ASCII output`);
  // One function expression per chunk, called by bin/runx.cjs with CommonJS's arguments.
  const chunk = `(function (exports, require, module, __filename, __dirname) {${converted.code}\n})`;
  writeFileSync(file.path, chunk);
  buildHash.update(`${basename(file.path)}\0${chunk}\0`);
}
await build({ ...cjs, entryPoints: { help: "src/cli/help-main.ts" }, outdir: "dist" });
// The verification worker (src/receipts/verify-pool.ts starts it beside dist/ and dist/cli/
// code): its own small bundle, so a worker loads only the receipt checks.
await build({
  ...cjs,
  entryPoints: { "verify-worker": "src/receipts/verify-worker.ts" },
  outdir: "dist",
});
// dist/cli/build.json: what bin/runx.cjs needs before it loads any code (the build id that
// packs are tied to, and the command names packs are kept for).
const { COMMAND_NAMES } = createRequire(import.meta.url)(join(root, "dist", "help.cjs"));
writeFileSync(
  join(root, "dist", "cli", "build.json"),
  `${JSON.stringify({ build_id: buildHash.digest("hex").slice(0, 16), commands: COMMAND_NAMES })}\n`,
);
await build({
  ...common,
  format: "esm",
  entryPoints: { index: "src/index.ts", "javascript-host": "src/runners/javascript-host.mjs" },
  outdir: "dist",
  banner: {
    js: 'import { createRequire as __runxCreateRequire } from "node:module"; const require = __runxCreateRequire(import.meta.url);',
  },
});
console.log("build: packages/runtime/dist");
