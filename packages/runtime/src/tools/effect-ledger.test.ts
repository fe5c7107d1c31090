import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import {
  EFFECT_LEDGER_SCHEMA,
  createFileEffectLedger,
  createMemoryEffectLedger,
  readEffectLedger,
} from "./effect-ledger.js";
import { makeTempWorkspace } from "../testing/tool-context.js";
import type { TestWorkspace } from "../testing/tool-context.js";
import type { EffectLedger } from "./types.js";

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "(succeeded)";
  } catch (error) {
    return isRuntimeError(error) ? error.code : "(not a RuntimeError)";
  }
}

let layout: TestWorkspace;
let file: string;
beforeEach(() => {
  layout = makeTempWorkspace("runx-ledger-");
  file = join(layout.workspace, ".runx", "receipts", "provider-effects.json");
});
afterEach(() => layout.cleanup());

const entry = (digest: string, n = 1) => ({ request_digest: digest, output: { n } });

describe.each<[string, () => EffectLedger]>([
  ["file ledger", () => createFileEffectLedger(file)],
  ["memory ledger", () => createMemoryEffectLedger()],
])("%s", (_name, make) => {
  it("returns nothing for a key it never recorded", async () => {
    expect(await make().lookup("k")).toBeUndefined();
  });

  it("keeps the first entry when the same key and digest are recorded again", async () => {
    const ledger = make();
    await ledger.record("k", entry("sha256:a", 1));
    await ledger.record("k", entry("sha256:a", 2));
    expect(await ledger.lookup("k")).toEqual(entry("sha256:a", 1));
  });

  it("refuses the same key with another digest", async () => {
    const ledger = make();
    await ledger.record("k", entry("sha256:a"));
    expect(await codeOf(ledger.record("k", entry("sha256:b")))).toBe("IDEMPOTENCY_CONFLICT");
    expect(await ledger.lookup("k")).toEqual(entry("sha256:a"));
  });
});

describe("createFileEffectLedger", () => {
  it("persists entries for a later ledger on the same file, leaving no temporary files", async () => {
    await createFileEffectLedger(file).record("k1", entry("sha256:a"));
    const reopened = createFileEffectLedger(file);
    expect(await reopened.lookup("k1")).toEqual(entry("sha256:a"));
    await reopened.record("k2", entry("sha256:b"));
    expect((await readEffectLedger(file)).map((e) => e.key)).toEqual(["k1", "k2"]);
    expect(readdirSync(join(layout.workspace, ".runx", "receipts"))).toEqual([
      "provider-effects.json.entries",
    ]);
    expect(readdirSync(`${file}.entries`).every((n) => /^[0-9a-f]{64}\.json$/.test(n))).toBe(true);
  });

  it("still reads the single-document ledger an earlier runtime wrote", async () => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      JSON.stringify({
        schema: EFFECT_LEDGER_SCHEMA,
        entries: [{ key: "old", request_digest: "sha256:o", output: { n: 0 } }],
      }),
    );
    const ledger = createFileEffectLedger(file);
    expect(await ledger.lookup("old")).toEqual(entry("sha256:o", 0));
    expect(await codeOf(ledger.record("old", entry("sha256:x")))).toBe("IDEMPOTENCY_CONFLICT");
    await ledger.record("new", entry("sha256:n"));
    expect((await readEffectLedger(file)).map((e) => e.key)).toEqual(["old", "new"]);
  });

  it("serializes concurrent records so none is lost", async () => {
    const ledger = createFileEffectLedger(file);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => ledger.record(`k${i}`, entry(`sha256:${i}`, i))),
    );
    expect(await readEffectLedger(file)).toHaveLength(20);
  });

  it("loses no entry when separate ledgers on one file record different keys at once", async () => {
    // Separate instances stand for separate processes (worker threads, a second CLI): their
    // in-process queues do not see each other, so only the file layout can keep both writes.
    const ledgers = Array.from({ length: 8 }, () => createFileEffectLedger(file));
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        ledgers[i % ledgers.length]!.record(`k${i}`, entry(`sha256:${i}`, i)),
      ),
    );
    const keys = (await readEffectLedger(file)).map((e) => e.key).sort();
    expect(keys).toEqual(Array.from({ length: 40 }, (_, i) => `k${i}`).sort());
    for (let i = 0; i < 40; i++) {
      expect(await createFileEffectLedger(file).lookup(`k${i}`)).toEqual(entry(`sha256:${i}`, i));
    }
  });

  it("lets exactly one of two racing records of one key with different digests win", async () => {
    const [a, b] = [createFileEffectLedger(file), createFileEffectLedger(file)];
    const results = await Promise.allSettled([
      a.record("k", entry("sha256:a")),
      b.record("k", entry("sha256:b")),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const [lost] = results.filter((r) => r.status === "rejected");
    expect((lost?.reason as { code?: string }).code).toBe("IDEMPOTENCY_CONFLICT");
    expect(await readEffectLedger(file)).toHaveLength(1);
  });

  it("reports a malformed ledger file or entry as STORE_ERROR", async () => {
    const ledger = createFileEffectLedger(file);
    await ledger.record("k", entry("sha256:a"));
    writeFileSync(file, "{not json");
    expect(await codeOf(ledger.lookup("other"))).toBe("STORE_ERROR");
    writeFileSync(file, JSON.stringify({ schema: EFFECT_LEDGER_SCHEMA, entries: [{ key: 1 }] }));
    expect(await codeOf(ledger.record("k2", entry("sha256:b")))).toBe("STORE_ERROR");
    const [name] = readdirSync(`${file}.entries`);
    writeFileSync(join(`${file}.entries`, name!), "{torn");
    expect(await codeOf(ledger.lookup("k"))).toBe("STORE_ERROR");
  });
});
