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

/** Every top-level receipt of the history, with no filter (so unreadable rows are listed). */
const HISTORY = [
  "runners:",
  "  default:",
  "    type: graph",
  "    inputs:",
  "      limit: {type: number, required: false, default: 50}",
  "    graph:",
  "      name: receipt-history",
  "      result_from: [query]",
  "      steps:",
  "        - id: query",
  "          tool: receipt.query",
  "          scopes: [receipt.read]",
  "          inputs:",
  "            limit: $input.limit",
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
  ws.write("skills/history/SKILL.md", "---\nname: history\n---\nList receipts.\n");
  ws.write("skills/history/X.yaml", HISTORY);
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

  it("answers receipt.query with tampered receipts as invalid with the reason, never leaving them out", async () => {
    ws.addBundledSkill("echo");
    const ids: string[] = [];
    for (const message of ["one", "two", "three"]) {
      const run = await runx(ws, ["skill", "skills/echo", "--message", message, "--json"]);
      ids.push(run.json<Envelope>().receipt_id);
    }
    const [edited, truncated, intact] = ids as [string, string, string];
    const rel = (id: string) => `.runx/receipts/sha256-${id.slice("sha256:".length)}.json`;
    ws.write(rel(edited), ws.read(rel(edited)).replace("step default completed", "step edited"));
    const text = ws.read(rel(truncated));
    ws.write(rel(truncated), text.slice(0, Math.floor(text.length / 2)));

    const r = await runx(ws, ["skill", "skills/history", "--json"]);
    expect(r.code).toBe(0);
    const found = r.json<Envelope>().result?.receipt_query?.data as unknown as {
      receipt_ids: string[];
      receipts: Array<{
        id: string;
        name: string | null;
        status: string | null;
        verification: { status: string; reason?: string };
      }>;
    };
    expect([...found.receipt_ids].sort()).toEqual([...ids].sort());
    const row = (id: string) => found.receipts.find((x) => x.id === id);
    expect(row(edited)).toMatchObject({ name: "echo", status: "closed" });
    expect(row(edited)?.verification.status).toBe("invalid");
    expect(row(edited)?.verification.reason).toContain("seal_digest_mismatch");
    expect(row(truncated)).toMatchObject({
      name: null,
      status: null,
      verification: { status: "invalid", reason: "receipt JSON is malformed" },
    });
    expect(row(intact)).toMatchObject({ name: "echo", verification: { status: "unverified" } });
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
