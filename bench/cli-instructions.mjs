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
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(repo, "packages", "runtime", "bin", "runx.cjs");
const argv = process.argv.slice(2);
const runsIdx = argv.indexOf("--runs");
const runs = runsIdx >= 0 ? Number(argv[runsIdx + 1]) : 5;
const json = argv.includes("--json");
if (!Number.isSafeInteger(runs) || runs < 1) {
  console.error("--runs must be a positive integer");
  process.exit(2);
}
if (spawnSync("valgrind", ["--version"]).status !== 0) {
  console.error("valgrind is not on PATH (apt-get install -y valgrind)");
  process.exit(2);
}

const ws = mkdtempSync(join(tmpdir(), "runx-bench-ir-"));
cpSync(join(repo, "skills", "echo"), join(ws, "skills", "echo"), { recursive: true });
const empty = join(ws, "empty.cjs");
writeFileSync(empty, "");
const env = {
  PATH: process.env.PATH,
  HOME: ws,
  RUNX_HOME: join(ws, "home"),
  RUNX_CWD: ws,
  NO_COLOR: "1",
};

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

const cases = [
  ["node -e 0", ["-e", "0"]],
  ["node <empty file>", [empty]],
  ["runx --help", [bin, "--help"]],
  [
    "runx skill skills/echo --message hi --json",
    [bin, "skill", "skills/echo", "--message", "hi", "--json"],
  ],
];
try {
  // Untimed runs first, as in cli-start: a new workspace settles after three runs (package
  // cache, pack pruning, code cache).
  for (const [, args] of cases) for (let i = 0; i < 3; i++) run(args);
  const samples = cases.map(() => []);
  for (let i = 0; i < runs; i++) {
    cases.forEach(([, args], k) => samples[k].push(instructions(args)));
    if (!json && process.stderr.isTTY) process.stderr.write(`\rrun ${i + 1}/${runs}`);
  }
  if (!json && process.stderr.isTTY) process.stderr.write("\r\x1b[K");
  const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
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
  rmSync(ws, { recursive: true, force: true });
}
