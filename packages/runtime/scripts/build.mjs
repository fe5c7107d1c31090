// Builds the runtime:
//   1. precompiles the JSON Schemas (scripts/gen-validators.mjs);
//   2. bundles the CLI as one CommonJS file, dist/cli.cjs, which bin/runx.cjs loads through a
//      V8 code cache (Node 20 has no module compile cache; compiling ~0.5 MB of JavaScript on
//      every start would dominate the CLI's start-up time);
//   3. bundles dist/help.cjs, the command catalog alone, so `--help` reads nothing else;
//   4. bundles the library entry dist/index.js (ESM) for the API server, and the javascript
//      runner's host script dist/javascript-host.js.
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";

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
  logLevel: "warning",
};

// CommonJS has no import.meta; give bundled code a file URL for its own location.
const cjs = {
  ...common,
  format: "cjs",
  define: { "import.meta.url": "__runx_import_meta_url" },
  banner: {
    js: 'const __runx_import_meta_url = require("node:url").pathToFileURL(__filename).href;',
  },
  outExtension: { ".js": ".cjs" },
};

await build({
  ...cjs,
  entryPoints: { cli: "src/cli/main.ts", help: "src/cli/help-main.ts" },
  outdir: "dist",
});
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
