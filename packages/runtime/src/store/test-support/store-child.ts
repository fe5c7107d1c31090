/**
 * Child-process entry for the store's multi-process tests (bundled by `child-process.ts`).
 *
 *   store-child open   <db> <runId>            open (migrating), create one run, close
 *   store-child append <db> <runId> <count>    append `count` ledger entries, re-reading the
 *                                              tail whenever the store refuses a stale hash
 *
 * Protocol on stdout: `ready` once started, then waits for one stdin line (the start gun),
 * then prints one JSON result line: `{ok: true, …}` or `{ok: false, code, message}`.
 */
import { createHash } from "node:crypto";
import { createInterface } from "node:readline";
import { isRuntimeError } from "../../errors.js";
import { openStateStore } from "../open.js";
import { LEDGER_GENESIS_HASH } from "../state-store.js";
import type { StateStore } from "../state-store.js";

const [command, path, runId, countText] = process.argv.slice(2);

/** Test hash over the chain payload (the real writer uses canonical JSON). */
function chainHash(index: number, previousHash: string, entry: unknown): string {
  const payload = JSON.stringify({ index, previous_hash: previousHash, entry });
  return `sha256:${createHash("sha256").update(payload).digest("hex")}`;
}

function appendAll(store: StateStore, id: string, count: number): Record<string, unknown> {
  let conflicts = 0;
  for (let n = 0; n < count; n += 1) {
    for (;;) {
      const tail = store.getLedgerTail(id);
      const index = tail === undefined ? 0 : tail.idx + 1;
      const previousHash = tail?.entryHash ?? LEDGER_GENESIS_HASH;
      const entry = { writer: process.pid, n };
      try {
        store.appendLedgerEntry(id, {
          kind: "step_completed",
          status: "ok",
          entry,
          previousHash,
          entryHash: chainHash(index, previousHash, entry),
          index,
        });
        break;
      } catch (err) {
        if (!isRuntimeError(err) || err.details.reason !== "ledger_chain_mismatch") throw err;
        conflicts += 1;
      }
    }
  }
  return { appended: count, conflicts };
}

async function main(): Promise<Record<string, unknown>> {
  if (path === undefined || runId === undefined) throw new Error("usage: store-child cmd db run");
  process.stdout.write("ready\n");
  const lines = createInterface({ input: process.stdin });
  await new Promise<void>((resolve) => lines.once("line", () => resolve()));
  lines.close();

  const store = openStateStore({ path, label: "child.sqlite" });
  try {
    if (command === "open") {
      store.createRun({
        id: runId,
        skillName: "echo",
        runner: "default",
        skillRef: "skills/echo",
        packageDir: "skills/echo",
        packageDigest: "sha256:package",
        inputsDigest: "sha256:inputs",
      });
      return {};
    }
    if (command === "append") return appendAll(store, runId, Number(countText));
    throw new Error(`unknown command ${String(command)}`);
  } finally {
    store.close();
  }
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify({ ok: true, ...result })}\n`),
  (err: unknown) => {
    const code = isRuntimeError(err) ? err.code : "UNEXPECTED";
    const message = err instanceof Error ? err.message : String(err);
    process.stdout.write(`${JSON.stringify({ ok: false, code, message })}\n`);
    process.exitCode = 1;
  },
);
