/**
 * Migration 0005 ties every approval decision to the pause it was cast on (schema.ts,
 * `approvalDecisions`). A database at migration 0004, with decisions on a gate that paused
 * twice in a run (one release completed, one cut off before its decisions were marked), is
 * migrated and each decision ends up on its own pause.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { appendRunEvent } from "../run/ledger.js";
import { consoleStoreExtension } from "./console-store.js";
import { openStateStore } from "./open.js";
import { fakeClock, insertLegacyRun, migrationsUpTo, tempDir } from "./test-support/fixtures.js";
import type { TempDir } from "./test-support/fixtures.js";
import { asyncSqliteStateStore } from "./sqlite-async.js";
import type { StateStore } from "./types.js";

let tmp: TempDir;
afterEach(() => tmp.cleanup());

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();
const receipt = (n: number): string => `sha256:${n.toString(16).padStart(64, "0")}`;

/** Appends a ledger line shaped as run/pause.ts and run/single-step.ts write them. */
async function pause(
  state: StateStore,
  runId: string,
  receiptId: string,
  requestIds: string[],
): Promise<void> {
  await appendRunEvent(asyncSqliteStateStore(state), runId, {
    kind: "resolution_requested",
    status: "waiting",
    detail: {
      request_ids: requestIds,
      checkpoint: { paused_receipt: { id: receiptId, digest: receiptId } },
    },
    producer: { skill: "gated", runner: "default" },
    createdAt: "2026-06-01T12:00:00Z",
    receiptId,
  });
}

async function seal(state: StateStore, runId: string, receiptId: string): Promise<void> {
  await appendRunEvent(asyncSqliteStateStore(state), runId, {
    kind: "sealed",
    status: "closed",
    detail: {},
    producer: { skill: "gated", runner: "default" },
    createdAt: "2026-06-01T12:00:00Z",
    receiptId,
  });
}

describe("migration 0005 (decisions tied to their pause)", () => {
  it("keeps each existing decision on the pause it was cast on", async () => {
    tmp = tempDir();
    const old = migrationsUpTo(join(tmp.dir, "migrations-0004"), "0004_console_sessions");
    const clock = fakeClock(T0);
    const before = openStateStore({ path: tmp.dbPath, migrationsDir: old, clock: clock.now });
    const run = "run_default_00000000000000a1";
    const other = "run_default_00000000000000b2";
    // Rows as a store at 0004 wrote them (this release's store writes later columns).
    const legacy = before.attach(({ sqlite }) => sqlite);
    insertLegacyRun(legacy, run);
    insertLegacyRun(legacy, other);
    // run: gate g pauses (P1), is released into a question (Q), pauses again (P2).
    await pause(before, run, receipt(1), ["g"]);
    clock.set(T0 + 20_000);
    await pause(before, run, receipt(2), ["q"]);
    clock.set(T0 + 30_000);
    await pause(before, run, receipt(3), ["g"]);
    // other: gate g pauses once and is released to a seal.
    clock.set(T0 + 5_000);
    await pause(before, other, receipt(11), ["g"]);
    clock.set(T0 + 50_000);
    await seal(before, other, receipt(12));
    before.close();

    const raw = new Database(tmp.dbPath);
    const insert = raw.prepare(
      `INSERT INTO approval_decisions (id, run_id, gate_id, operator_id, username, decision,
         reason, decided_at, package_digest, execution_closure_digest, sealed_receipt_id)
       VALUES (?, ?, ?, ?, ?, 'approve', 'ok', ?, 'sha256:p', 'sha256:c', ?)`,
    );
    // Released with P1 into Q, and marked: P1 (even though cast after P2 by the clock here,
    // the receipt it was sealed into says which pause it released).
    insert.run("dec_a", run, "g", "op_a", "a", at(40), receipt(2));
    // Cast on P1 and never marked (the release was cut off after pausing again): P1.
    insert.run("dec_b", run, "g", "op_b", "b", at(10), null);
    // Cast on P2, not yet released: P2.
    insert.run("dec_c", run, "g", "op_c", "c", at(35), null);
    // Cast before any pause by its timestamp (a clock that went back): the earliest, P1.
    insert.run("dec_d", run, "g", "op_d", "d", at(-60), null);
    // A gate the ledger never paused: attached to no pause at all.
    insert.run("dec_e", run, "h", "op_e", "e", at(35), null);
    // Another run's decision on the same gate id stays on that run's pause.
    insert.run("dec_f", other, "g", "op_a", "a", at(10), receipt(12));
    raw.close();

    const after = openStateStore({ path: tmp.dbPath });
    try {
      const store = after.attach(consoleStoreExtension);
      const pauses = Object.fromEntries(
        [...store.listDecisions(run), ...store.listDecisions(other)].map((d) => [
          d.id,
          d.pauseReceiptId,
        ]),
      );
      expect(pauses).toEqual({
        dec_a: receipt(1),
        dec_b: receipt(1),
        dec_c: receipt(3),
        dec_d: receipt(1),
        dec_e: "unattributed",
        dec_f: receipt(11),
      });
      expect(store.listDecisions(run, "g", receipt(3)).map((d) => d.id)).toEqual(["dec_c"]);
      // The one-vote index is per pause: a, who decided P1, may decide P2, once.
      const vote = {
        id: "dec_a2",
        runId: run,
        gateId: "g",
        pauseReceiptId: receipt(3),
        operatorId: "op_a",
        username: "a",
        decision: "approve" as const,
        reason: "again",
        decidedAt: at(60),
        packageDigest: "sha256:p",
        executionClosureDigest: "sha256:c",
      };
      expect(store.insertDecision(vote).pauseReceiptId).toBe(receipt(3));
      expect(() => store.insertDecision({ ...vote, id: "dec_a3" })).toThrow(
        expect.objectContaining({ code: "POLICY_DENIED" }),
      );
    } finally {
      after.close();
    }
    const columns = new Database(tmp.dbPath, { readonly: true });
    try {
      const names = (
        columns.prepare("PRAGMA table_info(approval_decisions)").all() as Array<{ name: string }>
      ).map((c) => c.name);
      expect(names).toContain("pause_receipt_id");
      expect(names).not.toContain("sealed_receipt_id");
    } finally {
      columns.close();
    }
  });
});
