// Builds the API into dist/: main.js (the server) and run-worker.js (a worker of its run
// pool), both ESM for plain `node`. @trpc/server and jose are bundled in; @runx/runtime stays
// an import of the built runtime (packages/runtime/dist), which locates its own migrations,
// native SQLite binding and javascript-runner host relative to itself.
import { build } from "esbuild";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
rmSync(join(root, "dist"), { recursive: true, force: true });
await build({
  absWorkingDir: root,
  entryPoints: { main: "src/main.ts", "run-worker": "src/run-worker.mjs" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  external: ["@runx/runtime"],
  legalComments: "none",
  minify: false,
  logLevel: "warning",
});
console.log("build: apps/api/dist");
