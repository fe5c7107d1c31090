/**
 * The receipt history tools through the built `runx` executable: a graph skill queries the
 * workspace's receipt history and proves what it found, so a second run sees (and proves)
 * the receipt the first run sealed.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../../testing/cli.js";
import type { Workspace } from "../../testing/cli.js";

const GRAPH = [
  "runners:",
  "  default:",
  "    type: graph",
  "    inputs:",
  "      skill: {type: string, required: true}",
  "    graph:",
  "      name: receipt-audit",
  "      result_from: [query]",
  "      steps:",
  "        - id: query",
  "          tool: receipt.query",
  "          scopes: [receipt.read]",
  "          inputs:",
  "            skill: $input.skill",
  "            verify_chain: true",
  "",
].join("\n");

const PROVE = [
  "runners:",
  "  default:",
  "    type: graph",
  "    inputs:",
  "      receipt_id: {type: string, required: true}",
  "    graph:",
  "      name: receipt-prove",
  "      result_from: [prove]",
  "      steps:",
  "        - id: prove",
  "          tool: receipt.prove",
  "          scopes: [receipt.read]",
  "          inputs:",
  "            receipt_ids: [$input.receipt_id]",
  "",
].join("\n");

interface Envelope {
  status: string;
  receipt_id: string;
  result: Record<string, { data: { receipt_ids?: string[]; decision?: string } }> | null;
  closure?: { summary: string };
}

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
  ws.write("skills/audit/SKILL.md", "---\nname: audit\n---\nAudit receipts.\n");
  ws.write("skills/audit/X.yaml", GRAPH);
  ws.write("skills/prove/SKILL.md", "---\nname: prove\n---\nProve receipts.\n");
  ws.write("skills/prove/X.yaml", PROVE);
});
afterEach(() => ws.cleanup());

describe("receipt tools in a graph run by the runx CLI", () => {
  it("queries the history a previous run sealed, then proves that receipt", async () => {
    const first = await runx(ws, ["skill", "skills/audit", "--skill", "audit", "--json"]);
    expect(first.code).toBe(0);
    const sealed = first.json<Envelope>();
    expect(sealed.status).toBe("sealed");
    expect(sealed.result?.receipt_query?.data.receipt_ids).toEqual([]);

    const second = await runx(ws, ["skill", "skills/audit", "--skill", "audit", "--json"]);
    const found = second.json<Envelope>().result?.receipt_query?.data as unknown as {
      receipt_ids: string[];
      verification: { checked: boolean; trees: Array<{ valid: boolean }> };
    };
    expect(found.receipt_ids).toEqual([sealed.receipt_id]);
    expect(found.verification.checked).toBe(true);
    expect(found.verification.trees.map((t) => t.valid)).toEqual([true]);

    const proof = await runx(ws, [
      "skill",
      "skills/prove",
      "--receipt-id",
      sealed.receipt_id,
      "--json",
    ]);
    expect(proof.code).toBe(0);
    expect(proof.json<Envelope>().result?.receipt_proof?.data.decision).toBe("unverified");
  });

  it("refuses the step when receipt.read is not granted", async () => {
    ws.write("skills/audit/X.yaml", GRAPH.replace("          scopes: [receipt.read]\n", ""));
    const r = await runx(ws, ["skill", "skills/audit", "--skill", "audit", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json<Envelope>().closure?.summary).toContain(
      "POLICY_DENIED: step query is not granted scope receipt.read",
    );
  });
});
