/**
 * Pause → resume through the public CLI (`flow-agent-resume` and
 * `flow-approval-resume`): `runx skill … --json --receipt-dir R` must pause (exit 2) with the
 * stated status and request, and `runx resume <run_id> answers.json --json --receipt-dir R`
 * with the public answers document must seal (exit 0).
 */
import { runx, type CliResult, type Workspace } from "../../testing/cli.js";
import { replayEachInScratch, type CaseRow, type Verdict } from "../corpus.test-kit.js";

interface RunEnvelope {
  status?: string;
  run_id?: string;
  requests?: Array<{ id?: string; kind?: string }>;
}

/** What one flow runs and expects. */
interface Flow {
  args: string[];
  status: "needs_agent" | "needs_approval";
  request: { id: string; kind: string };
  answers: Record<string, unknown>;
}

const FLOWS: Record<string, Flow> = {
  "flow-agent-resume": {
    args: ["--input", "prompt=Review the boundary of this change."],
    status: "needs_agent",
    request: { id: "agent_task.review-boundary.output", kind: "agent_act" },
    answers: { answers: { "agent_task.review-boundary.output": { verdict: "approve" } } },
  },
  "flow-approval-resume": {
    args: [],
    status: "needs_approval",
    request: { id: "mcp-approval", kind: "approval" },
    answers: { approvals: { "mcp-approval": true } },
  },
};

function envelope(r: CliResult): RunEnvelope | undefined {
  try {
    return r.json<RunEnvelope>();
  } catch {
    return undefined;
  }
}

function describe(r: CliResult, env: RunEnvelope | undefined): string {
  const detail = env === undefined ? (r.stderr.trim() || r.stdout.trim()).split("\n")[0] : "";
  return `exit ${r.code}, status ${env?.status ?? "(no JSON)"}${detail ? `: ${detail}` : ""}`;
}

async function replayFlow(ws: Workspace, row: CaseRow, flow: Flow): Promise<Verdict> {
  const receiptDir = ["--receipt-dir", "conformance-receipts"];
  const paused = await runx(ws, [
    "skill",
    `./${row.target}`,
    ...flow.args,
    "--json",
    ...receiptDir,
  ]);
  const first = envelope(paused);
  if (paused.code !== 2 || first?.status !== flow.status) {
    return {
      result: "FAIL",
      reason: `skill: ${describe(paused, first)}, expected exit 2 ${flow.status}`,
    };
  }
  const request = (first.requests ?? []).find((q) => q.id === flow.request.id);
  if (request?.kind !== flow.request.kind) {
    const seen = (first.requests ?? []).map((q) => `${q.id} (${q.kind})`).join(", ");
    return {
      result: "FAIL",
      reason: `skill: no ${flow.request.kind} request ${flow.request.id} (requests: ${seen})`,
    };
  }
  if (first.run_id === undefined) return { result: "FAIL", reason: "skill: no run_id" };
  ws.write("answers.json", `${JSON.stringify(flow.answers)}\n`);
  const resumed = await runx(ws, ["resume", first.run_id, "answers.json", "--json", ...receiptDir]);
  const second = envelope(resumed);
  if (resumed.code !== 0 || second?.status !== "sealed") {
    return {
      result: "FAIL",
      reason: `resume: ${describe(resumed, second)}, expected exit 0 sealed`,
    };
  }
  return { result: "PASS" };
}

export function replayFlows(rows: CaseRow[]): Promise<Map<string, Verdict>> {
  return replayEachInScratch(rows, (ws, row) => {
    const flow = FLOWS[row.replay];
    return flow !== undefined
      ? replayFlow(ws, row, flow)
      : Promise.resolve({ result: "SKIP", reason: `no flow for ${row.replay}` });
  });
}
