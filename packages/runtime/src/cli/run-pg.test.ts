/**
 * Runs from the CLI on the shared PostgreSQL state store (RUNX_STATE_URL): a skill seals; a
 * graph paused at an approval in one workspace is resumed from another workspace (its own
 * HOME, the same database) and seals there; the receipts live in the database, verify from
 * either side, and no workspace gets a local state file.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { scratchPgState } from "../store/pg/test-kit.js";
import type { ScratchPgState } from "../store/pg/test-kit.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

const GATED = [
  "runners:",
  "  default:",
  "    default: true",
  "    type: graph",
  "    inputs:",
  "      message: {type: string, required: true}",
  "    graph:",
  "      name: gated",
  "      result_from: [after]",
  "      steps:",
  "        - id: before",
  "          skill: ../echo",
  "          inputs:",
  "            message: $input.message",
  "        - id: decide",
  "          run:",
  "            type: approval",
  "          inputs:",
  "            gate_id: release-gate",
  "            reason: Release the message.",
  "        - id: after",
  "          skill: ../echo",
  "          inputs:",
  "            message: $steps.before.message",
  "",
].join("\n");

interface Envelope {
  status: string;
  run_id: string;
  receipt_id: string;
  result: unknown;
  requests: Array<{ id: string; kind: string }>;
}

let scratch: ScratchPgState;
beforeAll(async () => {
  scratch = await scratchPgState();
}, 60_000);
afterAll(async () => {
  await scratch.drop();
}, 60_000);

/** Two workspaces holding the same packages, as two machines checked out at one commit. */
let a: Workspace;
let b: Workspace;
beforeEach(() => {
  [a, b] = [makeWorkspace("runx-run-pg-a-"), makeWorkspace("runx-run-pg-b-")];
  for (const ws of [a, b]) {
    ws.addBundledSkill("echo");
    ws.write("skills/gated/SKILL.md", "---\nname: gated\n---\nEcho after a human gate.\n");
    ws.write("skills/gated/X.yaml", GATED);
  }
});
afterEach(() => {
  a.cleanup();
  b.cleanup();
});

const onPg = () => ({ env: { RUNX_STATE_URL: scratch.url }, timeoutMs: 30_000 });

async function storedReceipt(id: string): Promise<Buffer | undefined> {
  const pg = await scratch.open(1);
  const r = await pg.pool.query<{ bytes: Buffer }>("SELECT bytes FROM receipts WHERE id = $1", [
    id,
  ]);
  return r.rows[0]?.bytes;
}

const receiptFile = (ws: Workspace, id: string) =>
  join(ws.root, ".runx", "receipts", `sha256-${id.slice("sha256:".length)}.json`);

describe("runx runs with RUNX_STATE_URL", () => {
  it("seals a skill into the database and verifies it from another workspace", async () => {
    const run = await runx(a, ["skill", "skills/echo", "--message", "hi", "--json"], onPg());
    expect(run.code, run.stderr).toBe(0);
    const sealed = run.json<Envelope>();
    expect(sealed).toMatchObject({ status: "sealed", result: { message: "hi" } });
    // The row holds the exact bytes of the file form.
    expect((await storedReceipt(sealed.receipt_id))?.toString()).toBe(
      readFileSync(receiptFile(a, sealed.receipt_id), "utf8"),
    );
    const verified = await runx(b, ["verify", "--run", sealed.run_id, "--json"], onPg());
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json()).toMatchObject({ valid: true, receipt_count: 1 });
    expect(existsSync(join(a.root, ".runx", "state.sqlite"))).toBe(false);
    expect(existsSync(join(b.root, ".runx", "state.sqlite"))).toBe(false);
  }, 60_000);

  it("pauses a graph at its approval in one workspace and seals it from another", async () => {
    const paused = await runx(a, ["skill", "skills/gated", "--message", "ship", "--json"], onPg());
    expect(paused.code, paused.stderr).toBe(2);
    const pause = paused.json<Envelope>();
    expect(pause.status).toBe("needs_approval");
    const gate = pause.requests[0]!.id;
    const pending = await runx(b, ["history", "--json"], onPg());
    expect(pending.json<{ pendingRuns: Array<{ id: string }> }>().pendingRuns).toEqual([
      expect.objectContaining({ id: pause.run_id, status: "needs_approval" }),
    ]);

    b.write("answers.json", JSON.stringify({ approvals: { [gate]: true } }));
    const resumed = await runx(b, ["resume", pause.run_id, "answers.json", "--json"], onPg());
    expect(resumed.code, resumed.stderr).toBe(0);
    const sealed = resumed.json<Envelope>();
    expect(sealed).toMatchObject({
      status: "sealed",
      run_id: pause.run_id,
      result: { message: "ship" },
    });

    // The graph's receipt names the steps sealed in both workspaces; every one is in the
    // database, and the run's tree verifies from either workspace.
    const graph = JSON.parse(readFileSync(receiptFile(b, sealed.receipt_id), "utf8")) as {
      lineage: { children: Array<{ uri: string }>; previous: { uri: string } };
    };
    expect(graph.lineage.previous.uri).toBe(`runx:receipt:${pause.receipt_id}`);
    const children = graph.lineage.children.map((c) => c.uri.replace("runx:receipt:", ""));
    expect(children.length).toBeGreaterThanOrEqual(2);
    for (const id of [sealed.receipt_id, pause.receipt_id, ...children]) {
      expect(await storedReceipt(id), id).toBeDefined();
    }
    expect(existsSync(receiptFile(b, children[0]!))).toBe(false);
    for (const ws of [a, b]) {
      const verified = await runx(ws, ["verify", "--run", pause.run_id, "--json"], onPg());
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.json()).toMatchObject({ valid: true });
    }

    const again = await runx(a, ["resume", pause.run_id, "-", "--json"], {
      ...onPg(),
      stdin: JSON.stringify({ approvals: { [gate]: true } }),
    });
    expect(again.code).toBe(1);
    expect(again.json().error).toMatchObject({ reason: "RESUME_REFUSED", status: "sealed" });

    const history = await runx(b, ["history", "--json"], onPg());
    expect(history.code, history.stderr).toBe(0);
    const listed = history.json<{
      receipts: Array<{ id: string; run_id: string | null }>;
      pendingRuns: unknown[];
    }>();
    expect(listed.pendingRuns).toEqual([]);
    expect(listed.receipts).toContainEqual(
      expect.objectContaining({ id: sealed.receipt_id, run_id: pause.run_id }),
    );
    for (const ws of [a, b]) expect(existsSync(join(ws.root, ".runx", "state.sqlite"))).toBe(false);
  }, 90_000);

  it("lets exactly one of two workspaces racing to resume a paused run take it", async () => {
    const paused = await runx(a, ["skill", "skills/gated", "--message", "once", "--json"], onPg());
    expect(paused.code, paused.stderr).toBe(2);
    const pause = paused.json<Envelope>();
    const doc = JSON.stringify({ approvals: { [pause.requests[0]!.id]: true } });
    const raced = await Promise.all(
      [a, b].map((ws) =>
        runx(ws, ["resume", pause.run_id, "-", "--json"], { ...onPg(), stdin: doc }),
      ),
    );
    expect(raced.map((r) => r.code).sort()).toEqual([0, 1]);
    const loser = raced.find((r) => r.code === 1)!;
    expect(loser.json().error).toMatchObject({ reason: "RESUME_REFUSED" });
    const pg = await scratch.open(1);
    const resumed = await pg.pool.query(
      "SELECT count(*)::int AS n FROM run_ledger WHERE run_id = $1 AND kind = 'resumed'",
      [pause.run_id],
    );
    expect(resumed.rows[0]).toEqual({ n: 1 });
  }, 90_000);
});
