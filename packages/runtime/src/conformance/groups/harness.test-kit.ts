/**
 * Harness fixtures (`harness-pkg`, `harness-file`): `runx harness <target> --json --receipt-dir R`
 * from the root of a scratch copy of the corpus, judged as the corpus README describes.
 */
import { buildTree, type CaseRow, type Verdict } from "../corpus.test-kit.js";
import { makeWorkspace, runx } from "../../testing/cli.js";

interface Report {
  /** `runx.receipt.v1` when a standalone fixture passed (its sealed receipt is printed). */
  schema?: string;
  case_names?: string[];
  assertion_errors?: string[];
  status?: string;
}

function judge(row: CaseRow, code: number | null, report: Report | undefined): Verdict {
  if (report === undefined) return { result: "FAIL", reason: `no JSON report (exit ${code})` };
  if (row.replay === "harness-file") {
    if (code === 0 && report.schema === "runx.receipt.v1") return { result: "PASS" };
    return {
      result: "FAIL",
      reason: report.assertion_errors?.[0] ?? `exit ${code}, status ${report.status}`,
    };
  }
  const label = row.id.includes("#") ? row.caseName : row.id;
  if (!(report.case_names ?? []).includes(row.caseName)) {
    const own = (report.assertion_errors ?? []).find((e) => e.startsWith(`${label}: `));
    return { result: "FAIL", reason: own ?? "case not reported" };
  }
  const errors = (report.assertion_errors ?? []).filter((e) => e.startsWith(`${label}: `));
  return errors.length === 0 ? { result: "PASS" } : { result: "FAIL", reason: errors[0] ?? "" };
}

export async function replayHarness(rows: CaseRow[]): Promise<Map<string, Verdict>> {
  const groups = new Map<string, CaseRow[]>();
  for (const row of rows) {
    const key = `${row.replay}\t${row.target}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const verdicts = new Map<string, Verdict>();
  for (const group of groups.values()) {
    const first = group[0] as CaseRow;
    const ws = makeWorkspace("runx-conformance-");
    try {
      const problem = buildTree(ws.root, group);
      if (problem !== undefined) {
        for (const row of group) verdicts.set(row.id, { result: "SKIP", reason: problem });
        continue;
      }
      const r = await runx(
        ws,
        ["harness", first.target, "--json", "--receipt-dir", "conformance-receipts"],
        { timeoutMs: 60_000 },
      );
      let report: Report | undefined;
      try {
        report = r.json<Report>();
      } catch {
        report = undefined;
      }
      for (const row of group) verdicts.set(row.id, judge(row, r.code, report));
    } finally {
      ws.cleanup();
    }
  }
  return verdicts;
}
