// Builds the runtime: precompiles the JSON Schemas, then bundles the CLI and the library
// entry with esbuild. Commands are split into chunks loaded on demand, so `runx --help`
// reads only the CLI shell and never the parser, SQLite or the receipt code.
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { execFileSync } from "node:child_process";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
execFileSync(process.execPath, [join(root, "scripts", "gen-validators.mjs")], { stdio: "inherit" });
rmSync(join(root, "dist"), { recursive: true, force: true });

await build({
  absWorkingDir: root,
  entryPoints: {
    cli: "src/cli/main.ts",
    index: "src/index.ts",
    "javascript-host": "src/runners/javascript-host.mjs",
  },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  external: ["better-sqlite3"],
  chunkNames: "chunks/[name]-[hash]",
  banner: {
    js: 'import { createRequire as __runxCreateRequire } from "node:module"; const require = __runxCreateRequire(import.meta.url);',
  },
  legalComments: "none",
  logLevel: "warning",
});
console.log("build: packages/runtime/dist");
