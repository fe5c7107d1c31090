// Console receipt-DAG benchmark: how long the console's fast layered layout (the one used
// above ELK's limit) and the viewport cull take for DAGs of 1,000 to 20,000 receipts, next to
// a baseline measured in the same run: JSON.parse of the same DAG as the API sends it (the
// unavoidable cost of receiving it). Target: layout + cull ≤ 10x the parse baseline, so a
// page of thousands of nodes stays responsive.
// Usage: node bench/console-dag.mjs [--json]
import { build } from "esbuild";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = mkdtempSync(join(tmpdir(), "runx-bench-dag-"));
await build({
  entryPoints: [join(repo, "apps", "web", "src", "lib", "dag-model.ts")],
  bundle: true,
  format: "esm",
  platform: "node",
  outfile: join(out, "dag-model.mjs"),
  logLevel: "warning",
});
const { cull, fastLayout, visibleRect } = await import(pathToFileURL(join(out, "dag-model.mjs")));
rmSync(out, { recursive: true, force: true });

function dag(size) {
  const nodes = Array.from({ length: size }, (_, i) => ({
    id: `sha256:${i.toString(16).padStart(64, "0")}`,
    name: `step_${i}`,
    status: "verified",
  }));
  const edges = nodes.slice(1).map((node, i) => ({
    from: nodes[Math.floor(i / 8)].id,
    to: node.id,
    kind: "child",
  }));
  return JSON.stringify({ nodes, edges });
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time(fn, runs) {
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    samples.push(performance.now() - t);
  }
  return median(samples);
}

const rows = [];
for (const size of [1_000, 5_000, 20_000]) {
  const text = dag(size);
  const parsed = JSON.parse(text);
  const runs = size >= 20_000 ? 7 : 15;
  const parse = time(() => JSON.parse(text), runs);
  const layout = time(() => {
    const placed = fastLayout(parsed.nodes, parsed.edges);
    cull(placed, visibleRect({ scale: 1, tx: 0, ty: 0 }, 1200, 800));
  }, runs);
  rows.push({ size, parse_ms: parse, layout_ms: layout, ratio: layout / parse });
}

if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ bench: "console-dag", target_ratio: 10, rows }));
} else {
  console.log("console-dag: median of repeated runs (layout + viewport cull vs JSON.parse)");
  for (const r of rows) {
    const verdict = r.ratio <= 10 ? "ok" : "MISSED";
    console.log(
      `  ${String(r.size).padStart(6)} receipts  parse ${r.parse_ms.toFixed(1).padStart(7)} ms  layout ${r.layout_ms.toFixed(1).padStart(7)} ms  ${r.ratio.toFixed(2)}x  (target <= 10x ${verdict})`,
    );
  }
}
