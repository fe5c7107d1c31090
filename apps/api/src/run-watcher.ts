/**
 * Watches the state store's run table for changes made by any process (API workers, the
 * CLI, another API) and publishes them as run events. Each poll reads the runs updated since
 * the newest change seen, minus an overlap window (writers in other processes commit with
 * their own clock, so a change can land slightly "in the past"); the indexed query
 * (`runs_updated_at_idx`) touches only the changed rows. Changes already seen are dropped.
 */
import type { Runtime } from "@runx/runtime";
import type { ApiEvents } from "./events.js";

/** How far back each poll looks beyond the newest change seen. */
export const OVERLAP_MS = 2000;
const PAGE = 500;

/** A running watcher. */
export interface RunWatcher {
  /** Polls once now (tests; the timer calls it too). */
  poll(): void;
  stop(): void;
}

/** Starts polling every `intervalMs` (only while someone is subscribed). */
export function watchRuns(
  runtime: Runtime,
  events: ApiEvents,
  options: { intervalMs?: number; now?: () => Date } = {},
): RunWatcher {
  const now = options.now ?? (() => new Date());
  // Start from "now": a new subscriber wants changes from here on, not history.
  let newest = now().toISOString();
  const seen = new Map<string, string>();
  const poll = (): void => {
    let since = new Date(Date.parse(newest) - OVERLAP_MS).toISOString();
    for (;;) {
      const rows = runtime.console.runs.changedSince(since, PAGE);
      for (const run of rows) {
        const key = `${run.status}|${run.updatedAt}`;
        if (seen.get(run.id) === key) continue;
        seen.set(run.id, key);
        if (run.updatedAt > newest) newest = run.updatedAt;
        events.run({
          runId: run.id,
          status: run.status,
          skill: run.skill,
          receiptId: run.receiptId,
          at: run.updatedAt,
        });
      }
      // A burst larger than a page: continue from the last change returned.
      const next = rows.length === PAGE ? rows[PAGE - 1]!.updatedAt : since;
      if (next === since) break;
      since = next;
    }
    // Forget changes that fell out of the window.
    const floor = new Date(Date.parse(newest) - OVERLAP_MS).toISOString();
    for (const [id, key] of seen) {
      if (key.slice(key.indexOf("|") + 1) < floor) seen.delete(id);
    }
  };
  const timer = setInterval(() => {
    if (!events.listening) {
      newest = now().toISOString();
      seen.clear();
      return;
    }
    try {
      poll();
    } catch (error) {
      process.stderr.write(`runx api: run watcher: ${(error as Error).message}\n`);
    }
  }, options.intervalMs ?? 300);
  timer.unref();
  return { poll, stop: () => clearInterval(timer) };
}
