// Where the CLI's start-up goes, counted in instructions (a diagnostic beside
// bench/cli-start.mjs, no target). Wall time on a shared VM moves by several milliseconds from
// run to run; the number of instructions the echo run executes (valgrind's callgrind, all
// threads) moves by 2-5%, and the median of five runs by about 1%, so the effect of a start-up
// change of a few percent can be read by comparing this count between two builds. Node's own
// start varies more under valgrind (up to ~15%, with its background threads' work), so the
// ratios printed are rougher than the echo run's own count.
//
// Prints, from one run, the median instruction count of `node -e 0`, of an empty script file,
// of `runx --help` and of `runx skill skills/echo --message hi --json`, and their ratios to
// `node -e 0`. Every command runs with a clean environment (as bench/cli-start.mjs runs them:
// PATH, HOME, RUNX_HOME, RUNX_CWD and NO_COLOR only). The session shell's environment can hold
// NODE_EXTRA_CA_CERTS, which makes every Node start load the system's CA bundle (about six times
// the instructions of a bare start); a measurement taken with it says little about runx.
//
// The echo run's wall-time ratio (cli-start) sits above its instruction ratio: the child
// process, two fsyncs and page faults cost time without costing instructions here.
//
// Usage: node bench/cli-instructions.mjs [--runs N] [--json]   (needs valgrind on PATH)
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI_CASES, WARM_UP_RUNS, benchFlags, cliWorkspace, median } from "./cli-kit.mjs";

const { runs, json } = benchFlags(5);
if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.error("valgrind is not on PATH (apt-get install -y valgrind)");
  process.exit(2);
}
const { ws, env, remove } = cliWorkspace("runx-bench-ir-");
const empty = join(ws, "empty.cjs");
writeFileSync(empty, "");

function run(args) {
  const r = spawnSync(process.execPath, args, { cwd: ws, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed (${r.status})\n${r.stderr}`);
}

function instructions(args) {
  const r = spawnSync(
    "valgrind",
    ["--tool=callgrind", "--callgrind-out-file=/dev/null", process.execPath, ...args],
    { cwd: ws, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  const refs = /I\s+refs:\s+([\d,]+)/.exec(r.stderr);
  if (r.status !== 0 || refs === null) {
    throw new Error(`valgrind node ${args.join(" ")} failed (${r.status})\n${r.stderr}`);
  }
  return Number(refs[1].replaceAll(",", ""));
}

const [node, ...runx] = CLI_CASES;
const cases = [node, ["node <empty file>", [empty]], ...runx];
try {
  // Untimed runs first (see WARM_UP_RUNS).
  for (const [, args] of cases) for (let i = 0; i < WARM_UP_RUNS; i++) run(args);
  const samples = cases.map(() => []);
  for (let i = 0; i < runs; i++) {
    cases.forEach(([, args], k) => samples[k].push(instructions(args)));
    if (!json && process.stderr.isTTY) process.stderr.write(`\rrun ${i + 1}/${runs}`);
  }
  if (!json && process.stderr.isTTY) process.stderr.write("\r\x1b[K");
  const medians = samples.map(median);
  const results = cases.map(([name], k) => ({
    name,
    instructions: medians[k],
    ratio: medians[k] / medians[0],
    spread: (Math.max(...samples[k]) - Math.min(...samples[k])) / medians[k],
    samples: samples[k],
  }));
  if (json) {
    console.log(JSON.stringify({ runs, results }, null, 2));
  } else {
    console.log(`cli-instructions: ${runs} run(s) each under callgrind, median instructions`);
    for (const r of results) {
      console.log(
        `  ${r.name.padEnd(48)} ${(r.instructions / 1e6).toFixed(1).padStart(7)} M  ${r.ratio.toFixed(2)}x  (spread ${(r.spread * 100).toFixed(1)}%)`,
      );
    }
  }
} finally {
  remove();
}
