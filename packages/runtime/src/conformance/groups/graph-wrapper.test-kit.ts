/**
 * Graph documents and graph packages through a wrapper fixture (`graph-wrapper`,
 * `graph-not-closed`). Upstream has no fixture file for these cases, so the
 * replayer writes one of its own per case into the scratch tree — `kind: graph` with `target:`
 * the graph document (`kind: skill` for a package target), the expectation taken from the
 * table's `expect` column — and runs it standalone:
 * `runx harness <wrapper.yaml> --json --receipt-dir R`.
 *
 * `expect` holds `status=<s>`, `steps=<a,b,…>` and `approve=<gate id>` (an approval the
 * caller grants). `graph-not-closed` cases pass when the run pauses or is refused: the
 * report's receipt exists and its disposition is not `closed`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { replayEachInScratch, type CaseRow, type Verdict } from "../corpus.test-kit.js";
import { runx } from "../../testing/cli.js";

interface Seal {
  seal?: { disposition?: string; reason_code?: string };
}

/** A failing run prints the harness report; a passing standalone fixture its sealed receipt. */
interface Report extends Seal {
  schema?: string;
  status?: string;
  assertion_errors?: string[];
  receipt?: Seal;
}

/** Where wrapper fixtures are written inside the scratch tree. */
const WRAPPER_DIR = "conformance-wrappers";

/** The wrapper fixture's YAML for a row, or a reason it cannot be written. */
export function wrapperFixture(row: CaseRow): { yaml: string } | { problem: string } {
  const isFile = /\.ya?ml$/.test(row.target);
  const lines = [
    `name: ${JSON.stringify(row.caseName)}`,
    `kind: ${isFile ? "graph" : "skill"}`,
    `target: ${JSON.stringify(posix.relative(WRAPPER_DIR, row.target))}`,
  ];
  if (row.replay === "graph-not-closed") return { yaml: `${lines.join("\n")}\n` };
  const expect: string[] = [];
  const approvals: string[] = [];
  for (const token of row.expect.split(" ").filter((t) => t !== "")) {
    const [key, value = ""] = token.split("=", 2);
    if (key === "status") expect.push(`  status: ${value}`);
    else if (key === "steps") {
      expect.push("  steps:", ...value.split(",").map((s) => `    - ${JSON.stringify(s)}`));
    } else if (key === "approve") approvals.push(`    ${JSON.stringify(value)}: true`);
    else return { problem: `unknown expectation ${JSON.stringify(token)}` };
  }
  if (approvals.length > 0) lines.push("caller:", "  approvals:", ...approvals);
  if (expect.length > 0) lines.push("expect:", ...expect);
  return { yaml: `${lines.join("\n")}\n` };
}

function judge(row: CaseRow, code: number | null, report: Report | undefined): Verdict {
  if (report === undefined) return { result: "FAIL", reason: `no JSON report (exit ${code})` };
  if (row.replay === "graph-not-closed") {
    const seal = report.schema === "runx.receipt.v1" ? report.seal : report.receipt?.seal;
    if (seal === undefined) {
      return {
        result: "FAIL",
        reason: report.assertion_errors?.[0] ?? "the run left no receipt to judge",
      };
    }
    return seal.disposition === "closed"
      ? { result: "FAIL", reason: `sealed closed (${seal.reason_code ?? "?"})` }
      : { result: "PASS" };
  }
  if (code === 0 && report.schema === "runx.receipt.v1") return { result: "PASS" };
  return {
    result: "FAIL",
    reason: report.assertion_errors?.[0] ?? `exit ${code}, status ${report.status}`,
  };
}

export function replayGraphWrapper(rows: CaseRow[]): Promise<Map<string, Verdict>> {
  return replayEachInScratch(rows, async (ws, row) => {
    const fixture = wrapperFixture(row);
    if ("problem" in fixture) return { result: "SKIP", reason: fixture.problem };
    const file = join(WRAPPER_DIR, `${row.caseName}.yaml`);
    mkdirSync(dirname(join(ws.root, file)), { recursive: true });
    writeFileSync(join(ws.root, file), fixture.yaml);
    const r = await runx(ws, ["harness", file, "--json", "--receipt-dir", "conformance-receipts"], {
      timeoutMs: 60_000,
    });
    let report: Report | undefined;
    try {
      report = r.json<Report>();
    } catch {
      report = undefined;
    }
    return judge(row, r.code, report);
  });
}
