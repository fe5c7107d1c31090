/**
 * Unsigned receipt metadata shown as fact. A receipt's `metadata` is outside its digest and
 * signature (as upstream defines it), so whoever can write the receipt file can edit it and
 * the receipt still verifies. Here a sealed graph receipt's `metadata.steps[0].status` is
 * changed from succeeded to failed; `runx verify` still passes, and `runx history --detail`
 * (text and JSON) and the API's `receipts.get` (what the console shows) must give the
 * signed step status, keep the metadata out of the signed document, and label it unsigned.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { data, makeWorkspace, query, runx, startApiProcess } from "./kit.js";
import type { ApiProcess, Workspace } from "./kit.js";

const PAIR_SKILL = `---
name: pair
description: Two echo steps.
---
Two echo steps, for the receipt tests.
`;
const PAIR_PROFILE = `skill: pair
runners:
  default:
    default: true
    type: graph
    graph:
      name: pair
      result_from: [second]
      steps:
        - id: first
          skill: ../echo
          inputs:
            message: one
        - id: second
          skill: ../echo
          inputs:
            message: two
`;

/** What the tests read of a `history --detail` / `receipts.get` answer. */
interface Detail {
  receipt: Record<string, unknown> | null;
  verification: { status: string } | null;
  signed?: {
    verification: string;
    steps: { step_id: string; disposition: string | null; verification: string }[];
  } | null;
  unsigned?: {
    note: string;
    metadata: { steps?: { step_id: string; status: string }[] } | null;
    conflicts: { path: string; unsigned: unknown; signed: unknown }[];
  } | null;
}

function addPair(ws: Workspace): void {
  ws.addBundledSkill("echo");
  ws.write("skills/pair/SKILL.md", PAIR_SKILL);
  ws.write("skills/pair/X.yaml", PAIR_PROFILE);
}

/** Runs `pair` with the CLI and edits its sealed receipt's metadata; returns the ids. */
async function sealAndTamper(ws: Workspace): Promise<{ runId: string; receiptId: string }> {
  const sealed = await runx(ws, ["skill", "skills/pair", "--json"]);
  expect(sealed.code, sealed.stderr).toBe(0);
  const { run_id: runId, receipt_id: receiptId } = sealed.json<{
    run_id: string;
    receipt_id: string;
  }>();
  const file = join(ws.root, ".runx", "receipts", `${receiptId.replace(":", "-")}.json`);
  const doc = JSON.parse(readFileSync(file, "utf8")) as {
    metadata: { steps: { step_id: string; status: string }[] };
  };
  expect(doc.metadata.steps.map((s) => [s.step_id, s.status])).toEqual([
    ["first", "succeeded"],
    ["second", "succeeded"],
  ]);
  doc.metadata.steps[0]!.status = "failed";
  writeFileSync(file, JSON.stringify(doc));
  return { runId, receiptId };
}

/** The signed/unsigned split every entry point must give for the tampered receipt. */
function expectSplit(detail: Detail, where: string): void {
  expect(detail.receipt, where).not.toBeNull();
  // The signed document carries no metadata: nothing unsigned sits among the verified facts.
  expect(Object.keys(detail.receipt!), where).not.toContain("metadata");
  expect(
    detail.signed?.steps.map((s) => [s.step_id, s.disposition]),
    where,
  ).toEqual([
    ["first", "closed"],
    ["second", "closed"],
  ]);
  expect(detail.unsigned?.metadata?.steps?.[0]?.status, where).toBe("failed");
  expect(detail.unsigned?.note, where).toMatch(/outside the receipt's digest and signature/);
  expect(detail.unsigned?.conflicts, where).toEqual([
    { path: "metadata.steps[0].status", unsigned: "failed", signed: "closed" },
  ]);
}

describe("the CLI shows the signed step status and labels metadata as unsigned", () => {
  let ws: Workspace;
  let ids: { runId: string; receiptId: string };
  beforeAll(async () => {
    ws = makeWorkspace("runx-sec-meta-");
    addPair(ws);
    ids = await sealAndTamper(ws);
  });
  afterAll(() => ws?.cleanup());

  it("runx verify still passes: metadata is outside the digest, as upstream defines it", async () => {
    const verified = await runx(ws, ["verify", ids.receiptId, "--json"]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it("history --detail --json (by receipt id and by run id)", async () => {
    for (const id of [ids.receiptId, ids.runId]) {
      const res = await runx(ws, ["history", "--detail", id, "--json"]);
      expect(res.code, res.stderr).toBe(0);
      expectSplit(res.json<Detail>(), `history --detail ${id}`);
    }
  });

  it("history --detail (text): the tampered value appears only under the unsigned heading", async () => {
    const res = await runx(ws, ["history", "--detail", ids.receiptId]);
    expect(res.code, res.stderr).toBe(0);
    const text = res.stdout;
    const heading = text.indexOf("unsigned metadata (NOT verified)");
    expect(heading, text).toBeGreaterThan(0);
    const signedPart = text.slice(0, heading);
    const unsignedPart = text.slice(heading);
    expect(signedPart).toMatch(/"first": closed \(step_closed\) sha256:/);
    expect(signedPart).not.toContain("failed");
    expect(unsignedPart).toContain('"status":"failed"');
    expect(unsignedPart).toContain('metadata.steps[0].status says "failed"; signed: "closed"');
    // The run record is the state store's, and says so.
    const byRun = await runx(ws, ["history", "--detail", ids.runId]);
    expect(byRun.stdout).toMatch(/^run \S+ \(state store record; not covered by a signature\)/);
  });
});

describe("the API (what the console shows) does the same", () => {
  let api: ApiProcess;
  let ids: { runId: string; receiptId: string };
  beforeAll(async () => {
    api = await startApiProcess({ prepare: addPair });
    ids = await sealAndTamper(api.ws);
  });
  afterAll(async () => {
    await api?.cleanup();
  });

  it("receipts.get returns the signed status, the signed document without metadata, and the metadata labelled", async () => {
    const viewer = await api.operator("vera", "viewer");
    const answer = await query(
      api.url,
      "receipts.get",
      { receiptId: ids.receiptId },
      { cookie: viewer.cookie },
    );
    expectSplit(data<Detail>(answer), "receipts.get");
    expect(api.alive()).toBe(true);
  });
});
