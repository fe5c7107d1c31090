// CLI start-up benchmark. Prints, from one run, the median wall time of `node -e 0`,
// `runx --help` and `runx skill skills/echo --message hi --json`, and their ratios to node's
// own start. Targets: --help <= 1.5x node start; the echo run <= 2.5x node start.
// Usage: node bench/cli-start.mjs [--runs N] [--json]
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(repo, "packages", "runtime", "bin", "runx.cjs");
const argv = process.argv.slice(2);
const runsIdx = argv.indexOf("--runs");
const runs = runsIdx >= 0 ? Number(argv[runsIdx + 1]) : 21;
const json = argv.includes("--json");

// A scratch workspace so the benchmark never writes into the repository.
const ws = mkdtempSync(join(tmpdir(), "runx-bench-"));
cpSync(join(repo, "skills", "echo"), join(ws, "skills", "echo"), { recursive: true });
const env = {
  PATH: process.env.PATH,
  HOME: ws,
  RUNX_HOME: join(ws, "home"),
  RUNX_CWD: ws,
  NO_COLOR: "1",
};

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

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const cases = [
  ["node -e 0", ["-e", "0"]],
  ["runx --help", [bin, "--help"]],
  [
    "runx skill skills/echo --message hi --json",
    [bin, "skill", "skills/echo", "--message", "hi", "--json"],
  ],
];
// Warm up, then interleave the cases so drift affects all of them alike. A new workspace
// settles after three runs: the first misses the package cache and loads the package parser
// (the command's chunk pack grows), the second finds most of the grown pack unused and prunes
// it, the third compiles the pruned pack and writes its code cache.
for (const [, args] of cases) for (let i = 0; i < 3; i++) time(args);
const samples = cases.map(() => []);
for (let i = 0; i < runs; i++) cases.forEach(([, args], k) => samples[k].push(time(args)));
rmSync(ws, { recursive: true, force: true });

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
