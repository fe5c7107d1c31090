/**
 * Replays every public upstream case whose `runnable` is `offline` or `needs-script`, one replayer
 * per replay kind (groups/), prints PASS / FAIL / SKIP with a reason per case and one summary
 * line, and holds the result against `conformance-gaps.json`: a listed case that now passes, or
 * an unlisted case that fails, fails this test, so the gap list can only shrink.
 *
 * RUNX_CONFORMANCE_ONLY=kind[,kind] replays only those replay kinds (for working on one group).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readRows, type CaseRow, type Replayer, type Verdict } from "./corpus.test-kit.js";
import { REPLAYERS } from "./groups/index.test-kit.js";

const GAPS_FILE = join(dirname(new URL(import.meta.url).pathname), "conformance-gaps.json");
const only = (process.env.RUNX_CONFORMANCE_ONLY ?? "").split(",").filter((k) => k !== "");

const rows = readRows().filter((r) => only.length === 0 || only.includes(r.replay));
const gaps = JSON.parse(readFileSync(GAPS_FILE, "utf8")) as Record<string, string>;

// One batch per replayer, holding the rows of every replay kind it handles.
const batches = new Map<Replayer, { kinds: string[]; rows: CaseRow[] }>();
for (const row of rows) {
  const replayer = REPLAYERS[row.replay];
  if (replayer === undefined) continue;
  const batch = batches.get(replayer) ?? { kinds: [], rows: [] };
  if (!batch.kinds.includes(row.replay)) batch.kinds.push(row.replay);
  batch.rows.push(row);
  batches.set(replayer, batch);
}

const verdicts = new Map<string, Verdict>();

function problemsOf(batchRows: CaseRow[]): string[] {
  const problems: string[] = [];
  for (const row of batchRows) {
    const verdict = verdicts.get(row.id) ?? { result: "SKIP", reason: "not run" };
    const reason = verdict.result === "PASS" ? "" : ` — ${verdict.reason.split("\n")[0]}`;
    console.log(`${verdict.result} ${row.id}${reason}`);
    if (verdict.result === "PASS") {
      if (row.id in gaps) problems.push(`${row.id} passes now: remove it from the gaps`);
    } else if (!(row.id in gaps)) {
      problems.push(`${row.id} regressed: ${verdict.result} ${verdict.reason}`);
    }
  }
  return problems;
}

describe("upstream conformance corpus", () => {
  it("every listed gap is a replayable public case", () => {
    const all = readRows();
    const stale = Object.keys(gaps).filter((id) => !all.some((r) => r.id === id));
    expect(stale).toEqual([]);
    const unhandled = all.filter((r) => REPLAYERS[r.replay] === undefined).map((r) => r.id);
    expect(unhandled).toEqual([]);
  });

  for (const [replayer, batch] of batches) {
    it(`replays ${batch.kinds.join(", ")} (${batch.rows.length} cases)`, async () => {
      const result = await replayer(batch.rows);
      for (const row of batch.rows) {
        verdicts.set(row.id, result.get(row.id) ?? { result: "SKIP", reason: "no verdict" });
      }
      expect(problemsOf(batch.rows)).toEqual([]);
    }, 900_000);
  }

  afterAll(() => {
    const observed: Record<string, string> = {};
    for (const row of rows) {
      const v = verdicts.get(row.id);
      if (v !== undefined && v.result !== "PASS") {
        observed[row.id] = `${v.result}: ${v.reason.split("\n")[0]}`.slice(0, 240);
      }
    }
    const passing = rows.filter((r) => verdicts.get(r.id)?.result === "PASS").length;
    // Not in the "N passed, N failed" form on purpose: that line belongs to the test runner.
    console.log(
      `conformance summary — ${passing} of ${rows.length} replayed offline/needs-script upstream cases pass (${Math.round((100 * passing) / Math.max(1, rows.length))}%); the rest are listed with reasons in conformance-gaps.json`,
    );
    // The observed gaps, for refreshing the committed file on purpose.
    writeFileSync(
      join(tmpdir(), "runx-conformance-observed.json"),
      `${JSON.stringify(observed, null, 2)}\n`,
    );
  });
});
