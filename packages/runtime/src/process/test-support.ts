/** Test helpers for process supervision: deadline polling and process liveness. Not for production code. */
import { readdirSync, readFileSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";

/** Polls `check` every 25 ms until it returns true; throws once `deadlineMs` has passed. */
export async function waitFor(
  check: () => boolean,
  deadlineMs: number,
  what: string,
): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await delay(25);
  }
}

/**
 * True once `pid` no longer runs: signalling it fails with ESRCH, or it is a zombie still
 * waiting for init to reap it (it has exited; only its table entry remains).
 */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

/** Reads a pid a test script wrote to `file`, or undefined while it is not there yet. */
export function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Pids (as this process sees them) of live processes whose argv is exactly `argv`. A process
 * under a state cover lives in its own pid namespace (state-cover.ts), so a pid it reports
 * about itself means nothing here; tests find it by a unique command line instead.
 */
export function pidsWithArgv(argv: readonly string[]): number[] {
  const wanted = `${argv.join("\0")}\0`;
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8") === wanted && !isGone(Number(name))) {
        found.push(Number(name));
      }
    } catch {
      // gone while we looked
    }
  }
  return found;
}
