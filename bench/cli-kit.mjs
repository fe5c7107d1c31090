// What the CLI start-up benchmarks share (bench/cli-start.mjs, bench/cli-instructions.mjs): the
// `runx` executable, the commands they time, their scratch workspace and clean environment,
// the warm-up a new workspace needs, and their flags.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(repo, "packages", "runtime", "bin", "runx.cjs");

/** Node's own start, then the two commands with targets (node arguments of each). */
export const CLI_CASES = [
  ["node -e 0", ["-e", "0"]],
  ["runx --help", [bin, "--help"]],
  [
    "runx skill skills/echo --message hi --json",
    [bin, "skill", "skills/echo", "--message", "hi", "--json"],
  ],
];

/**
 * Runs before the counted ones. A new workspace settles after three runs: the first misses
 * the package cache and loads the package parser (the command's chunk pack grows), the second
 * finds most of the grown pack unused and prunes it, the third compiles the pruned pack and
 * writes its code cache.
 */
export const WARM_UP_RUNS = 3;

/** `--runs N` (default `fallback`) and `--json`; exits 2 on a bad count. */
export function benchFlags(fallback) {
  const argv = process.argv.slice(2);
  const at = argv.indexOf("--runs");
  const runs = at >= 0 ? Number(argv[at + 1]) : fallback;
  if (!Number.isSafeInteger(runs) || runs < 1) {
    console.error("--runs must be a positive integer");
    process.exit(2);
  }
  return { runs, json: argv.includes("--json") };
}

/**
 * A scratch workspace holding the bundled echo skill (a benchmark never writes into the
 * repository) and the clean environment every command runs with: PATH, HOME, RUNX_HOME,
 * RUNX_CWD and NO_COLOR only. An inherited NODE_EXTRA_CA_CERTS, for one, makes every Node
 * start load the system's CA bundle.
 */
export function cliWorkspace(prefix) {
  const ws = mkdtempSync(join(tmpdir(), prefix));
  cpSync(join(repo, "skills", "echo"), join(ws, "skills", "echo"), { recursive: true });
  return {
    ws,
    env: {
      PATH: process.env.PATH,
      HOME: ws,
      RUNX_HOME: join(ws, "home"),
      RUNX_CWD: ws,
      NO_COLOR: "1",
    },
    remove: () => rmSync(ws, { recursive: true, force: true }),
  };
}

/** The median of `xs` (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
