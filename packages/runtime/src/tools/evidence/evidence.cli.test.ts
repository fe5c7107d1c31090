/**
 * The evidence tools through the built `runx` executable: a graph skill reads a workspace
 * file, indexes it and verifies an agent-style candidate against the index, and the sealed
 * result carries the verified artifact (or only the fallback, when the candidate claims an
 * external effect the run never performed).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../../testing/cli.js";
import type { Workspace } from "../../testing/cli.js";

const NOTE = "Renewal is due on 1 May.\n";
const sha = (text: string): string =>
  `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

const GRAPH = [
  "runners:",
  "  default:",
  "    type: graph",
  "    inputs:",
  "      candidate: {type: json, required: true}",
  "      claims: {type: json, required: true}",
  "    graph:",
  "      name: evidence-brief",
  "      result_from: [verify]",
  "      steps:",
  "        - id: read",
  "          tool: fs.read",
  "          scopes: [fs.read]",
  "          inputs:",
  "            path: notes/renewal.md",
  "            path_scope: skill",
  "        - id: index",
  "          tool: evidence.index_sources",
  "          scopes: [runx:evidence:read]",
  "          inputs:",
  "            objective: summarise the renewal",
  "            source_packets: [$steps.read.file_read]",
  "        - id: verify",
  "          tool: evidence.verify_artifact",
  "          scopes: [runx:evidence:read]",
  "          inputs:",
  "            artifact_name: brief",
  "            candidate: $input.candidate",
  "            claim_bindings: $input.claims",
  "            required_paths: [summary]",
  "            fallback_artifact:",
  "              decision: needs_more_evidence",
  "              summary: ''",
  "          context:",
  "            source_digests: index.source_index.source_digests",
  "          artifacts:",
  "            named_emits:",
  "              brief: brief",
  "",
].join("\n");

interface Envelope {
  status: string;
  receipt_id: string;
  result: Record<string, unknown> | null;
}

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
  ws.write("skills/brief/notes/renewal.md", NOTE);
  ws.write("skills/brief/SKILL.md", "---\nname: brief\n---\nWrite an evidence-bound brief.\n");
  ws.write("skills/brief/X.yaml", GRAPH);
});
afterEach(() => ws.cleanup());

async function runBrief(
  candidate: unknown,
  claims: unknown,
): Promise<{ code: number; env: Envelope }> {
  const r = await runx(ws, [
    "skill",
    "skills/brief",
    "--input-json",
    `candidate=${JSON.stringify(candidate)}`,
    "--input-json",
    `claims=${JSON.stringify(claims)}`,
    "--json",
  ]);
  return { code: r.code ?? -1, env: r.json<Envelope>() };
}

describe("evidence tools in a graph run by the runx CLI", () => {
  it("seals a verified brief whose claim cites the indexed file", async () => {
    const claims = [{ claim: "Renewal is due on 1 May.", source_digest: sha(NOTE) }];
    const { code, env } = await runBrief({ decision: "ready", summary: "Due 1 May." }, claims);
    expect(code).toBe(0);
    expect(env.status).toBe("sealed");
    // The graph's result is the verify step's named artifact (its packet data).
    expect(env.result).toEqual({
      brief: {
        decision: "ready",
        summary: "Due 1 May.",
        validation: { status: "pass", findings: [] },
      },
    });
    // The graph receipt lists the three tool steps; the verify step has its own receipt.
    const readReceipt = (id: string): string =>
      readFileSync(join(ws.root, ".runx", "receipts", `sha256-${id.slice(7)}.json`), "utf8");
    const graph = JSON.parse(readReceipt(env.receipt_id)) as {
      metadata: { steps: Array<{ step_id: string; status: string; receipt_id: string }> };
    };
    expect(graph.metadata.steps.map((s) => [s.step_id, s.status])).toEqual([
      ["read", "succeeded"],
      ["index", "succeeded"],
      ["verify", "succeeded"],
    ]);
    const verifyStep = graph.metadata.steps[2];
    expect(readReceipt(verifyStep?.receipt_id ?? "")).toContain("evidence.verify_artifact");
  });

  it("refuses a candidate claiming an unsupported send and releases only the fallback", async () => {
    const claims = [{ claim: "Renewal is due on 1 May.", source_digest: sha(NOTE) }];
    const candidate = { decision: "ready", summary: "Emailed the customer.", sent: true };
    const { env } = await runBrief(candidate, claims);
    expect(env.status).toBe("sealed");
    const finding = {
      code: "artifact.effect.unsupported",
      message: "sent claims an external effect without provider evidence",
      path: "candidate.sent",
    };
    expect(env.result).toEqual({
      brief: {
        decision: "needs_more_evidence",
        summary: "",
        validation: { status: "fail", findings: [finding] },
      },
    });
    expect(JSON.stringify(env.result)).not.toContain("Emailed the customer.");
  });

  it("refuses a claim citing a source the index never admitted", async () => {
    const claims = [{ claim: "Invented.", source_digest: sha("not in the workspace") }];
    const { env } = await runBrief({ decision: "ready", summary: "x" }, claims);
    expect(env.result).toMatchObject({
      brief: {
        decision: "needs_more_evidence",
        validation: {
          status: "fail",
          findings: [{ code: "artifact.claim.unbound", path: "claim_bindings[0].source_digests" }],
        },
      },
    });
  });

  it("refuses the step when the evidence scope is not granted", async () => {
    ws.write(
      "skills/brief/X.yaml",
      GRAPH.replace(
        "          tool: evidence.index_sources\n          scopes: [runx:evidence:read]",
        "          tool: evidence.index_sources",
      ),
    );
    const r = await runx(ws, [
      "skill",
      "skills/brief",
      "--input-json",
      "candidate={}",
      "--input-json",
      "claims=[]",
      "--json",
    ]);
    expect(r.code).toBe(1);
    expect(r.json<{ closure: { summary: string } }>().closure.summary).toContain(
      "POLICY_DENIED: step index is not granted scope runx:evidence:read",
    );
  });

  it("replays a harness fixture that expects the unsupported send to be refused", async () => {
    ws.write(
      "skills/brief/fixtures/refuses-unsupported-send.yaml",
      [
        "name: refuses-unsupported-send",
        "kind: skill",
        "target: ..",
        "inputs:",
        "  candidate: {decision: ready, summary: Emailed the customer., sent: true}",
        `  claims: [{claim: Renewal is due on 1 May., source_digest: "${sha(NOTE)}"}]`,
        "expect:",
        "  status: sealed",
        "  output:",
        "    subset:",
        "      brief:",
        "        decision: needs_more_evidence",
        "        validation:",
        "          status: fail",
        "          findings:",
        "            - code: artifact.effect.unsupported",
        "              path: candidate.sent",
        "",
      ].join("\n"),
    );
    const r = await runx(ws, ["harness", "skills/brief", "--json"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("refuses-unsupported-send");
  });

  it("lists and inspects the evidence tools with their scope", async () => {
    const r = await runx(ws, ["tool", "inspect", "evidence.verify_artifact", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<{ tool: Record<string, unknown> }>().tool).toMatchObject({
      scopes: ["runx:evidence:read"],
      input_schema: { properties: { artifact_name: { default: "verified_artifact" } } },
    });
  });
});
