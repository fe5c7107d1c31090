import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeError } from "../../errors.js";
import { buildSkillReceipt } from "../../receipts/build.js";
import type { Receipt } from "../../receipts/model.js";
import { serializeReceipt } from "../../receipts/shape.js";
import { sealReceipt } from "../../receipts/seal.js";
import { localDevelopmentSigner } from "../../receipts/signer.js";
import { ReceiptStore } from "../../receipts/store.js";
import { localDevelopmentPolicy } from "../../receipts/verifier.js";
import type { PgState } from "./connect.js";
import { inTransaction } from "./connect.js";
import { claimNext, fencedWrite } from "./lease.js";
import { getReceiptBytes, putReceipt } from "./receipts.js";
import { insertQueuedRuns, scratchPgState } from "./test-kit.js";
import type { ScratchPgState } from "./test-kit.js";

let scratch: ScratchPgState;
let a: PgState;
let b: PgState;

beforeAll(async () => {
  scratch = await scratchPgState();
  a = await scratch.open();
  b = await scratch.open();
}, 60_000);
afterAll(async () => {
  await scratch.drop();
}, 60_000);

function receipt(name: string, reason = "process_closed"): Receipt {
  return sealReceipt(
    buildSkillReceipt({
      name,
      step: "default",
      createdAt: "2026-05-18T00:00:00Z",
      disposition: "closed",
      reasonCode: reason,
    }),
    localDevelopmentSigner(),
  );
}

async function refusal(promise: Promise<unknown>): Promise<RuntimeError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof RuntimeError) return err;
    throw err;
  }
  throw new Error("expected a RuntimeError");
}

describe("receipts in PostgreSQL", () => {
  it("stores the exact bytes of the receipt file and reads them back byte for byte", async () => {
    const r = receipt("bytes-check");
    const dir = mkdtempSync(join(tmpdir(), "runx-pg-receipts-"));
    try {
      const files = new ReceiptStore({ dir, policy: localDevelopmentPolicy() });
      const written = await files.write(r);
      const fileBytes = readFileSync(join(dir, written.file_name));
      expect(await putReceipt(a.pool, r.id, fileBytes)).toEqual({ receiptId: r.id, written: true });
      const back = await getReceiptBytes(b.pool, r.id);
      expect(back?.equals(fileBytes)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await getReceiptBytes(a.pool, receipt("never-stored").id)).toBeUndefined();
  });

  it("treats an identical rewrite as a no-op, also when two instances race", async () => {
    const r = receipt("identical");
    const bytes = serializeReceipt(r);
    const outcomes = await Promise.all([
      putReceipt(a.pool, r.id, bytes),
      putReceipt(b.pool, r.id, bytes),
      putReceipt(a.pool, r.id, bytes),
    ]);
    expect(outcomes.filter((o) => o.written)).toHaveLength(1);
    expect(await putReceipt(b.pool, r.id, bytes)).toEqual({ receiptId: r.id, written: false });
  });

  it("refuses different bytes under an existing id and keeps the first", async () => {
    const r = receipt("conflict");
    const bytes = serializeReceipt(r);
    await putReceipt(a.pool, r.id, bytes);
    // Same id, different bytes: the pretty-printed form of the same receipt.
    const other = JSON.stringify(JSON.parse(bytes), null, 2);
    const err = await refusal(putReceipt(b.pool, r.id, other));
    expect(err.code).toBe("RECEIPT_ALREADY_EXISTS");
    expect(err.details.receipt_id).toBe(r.id);
    expect((await getReceiptBytes(a.pool, r.id))?.toString("utf8")).toBe(bytes);
  });

  it("refuses bytes whose embedded id is not the row's key", async () => {
    const r = receipt("mismatch");
    const err = await refusal(putReceipt(a.pool, receipt("another").id, serializeReceipt(r)));
    expect(err.code).toBe("RECEIPT_INVALID");
    expect((await refusal(putReceipt(a.pool, "sha256:nothex", "{}"))).code).toBe("RECEIPT_INVALID");
  });

  it("commits a receipt with the seal, ledger line and index row of its transaction, or not at all", async () => {
    const [runId] = (await insertQueuedRuns(a.pool, 1)) as [string];
    const lease = await claimNext(a.pool, { owner: "alpha", ttlMs: 30_000 });
    if (lease === undefined) throw new Error("no claim");
    const r = receipt("sealed-with-run");
    const failed = fencedWrite(a.pool, lease, async (tx) => {
      await putReceipt(tx.client, r.id, serializeReceipt(r));
      await tx.client.query("UPDATE runs SET status = 'sealed', receipt_id = $2 WHERE id = $1", [
        runId,
        r.id,
      ]);
      throw new Error("index row failed");
    });
    await expect(failed).rejects.toThrow("index row failed");
    expect(await getReceiptBytes(b.pool, r.id)).toBeUndefined();

    await fencedWrite(a.pool, lease, async (tx) => {
      await putReceipt(tx.client, r.id, serializeReceipt(r));
      await tx.client.query(
        `INSERT INTO receipt_index (receipt_id, run_id, skill_name, disposition, created_at, file_name)
         VALUES ($1, $2, 'sealed-with-run', 'closed', '2026-05-18T00:00:00Z', 'db')`,
        [r.id, runId],
      );
    });
    expect((await getReceiptBytes(b.pool, r.id))?.toString("utf8")).toBe(serializeReceipt(r));
    // A plain transaction works too (no lease: the CLI's local runs).
    const local = receipt("local");
    await inTransaction(b.pool, (tx) => putReceipt(tx, local.id, serializeReceipt(local)));
    expect(await getReceiptBytes(a.pool, local.id)).toBeDefined();
  });
});
