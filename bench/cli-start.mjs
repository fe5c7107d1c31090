// CLI start-up benchmark. Prints, from one run, the median wall time of `node -e 0`,
// `runx --help` and `runx skill skills/echo --message hi --json`, and their ratios to node's
// own start. Targets: --help <= 1.5x node start; the echo run <= 2.5x node start.
// Usage: node bench/cli-start.mjs [--runs N] [--json]
import { spawnSync } from "node:child_process";
import { CLI_CASES, WARM_UP_RUNS, benchFlags, cliWorkspace, median } from "./cli-kit.mjs";

const { runs, json } = benchFlags(21);
const { ws, env, remove } = cliWorkspace("runx-bench-");

function time(args) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { cwd: ws, env, encoding: "utf8" });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) {
    throw new Error(
      `bench command failed (${r.status}): node ${args.join(" ")}\n${r.stderr}${r.stdout}`,
    );
  }
  return ms;
}

const cases = CLI_CASES;
// Warm up (see WARM_UP_RUNS), then interleave the cases so drift affects all of them alike.
for (const [, args] of cases) for (let i = 0; i < WARM_UP_RUNS; i++) time(args);
const samples = cases.map(() => []);
for (let i = 0; i < runs; i++) cases.forEach(([, args], k) => samples[k].push(time(args)));
remove();

const medians = samples.map(median);
const base = medians[0];
const targets = [null, 1.5, 2.5];
const rows = cases.map(([name], k) => ({
  name,
  median_ms: Number(medians[k].toFixed(2)),
  ratio: Number((medians[k] / base).toFixed(2)),
  target_ratio: targets[k],
  within_target: targets[k] === null ? null : medians[k] / base <= targets[k],
}));
if (json) {
  process.stdout.write(`${JSON.stringify({ runs, rows })}\n`);
} else {
  console.log(`cli-start: ${runs} runs each, median wall time`);
  for (const r of rows) {
    const t =
      r.target_ratio === null
        ? "baseline"
        : `target <= ${r.target_ratio}x ${r.within_target ? "ok" : "MISSED"}`;
    console.log(
      `  ${r.name.padEnd(46)} ${r.median_ms.toFixed(1).padStart(8)} ms  ${r.ratio.toFixed(2)}x  (${t})`,
    );
  }
}
