import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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
      "provider-effects.json",
    ]);
  });

  it("serializes concurrent records so none is lost", async () => {
    const ledger = createFileEffectLedger(file);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => ledger.record(`k${i}`, entry(`sha256:${i}`, i))),
    );
    expect(await readEffectLedger(file)).toHaveLength(20);
  });

  it("reports a malformed ledger file as STORE_ERROR", async () => {
    const ledger = createFileEffectLedger(file);
    await ledger.record("k", entry("sha256:a"));
    writeFileSync(file, "{not json");
    expect(await codeOf(ledger.lookup("k"))).toBe("STORE_ERROR");
    writeFileSync(file, JSON.stringify({ schema: EFFECT_LEDGER_SCHEMA, entries: [{ key: 1 }] }));
    expect(await codeOf(ledger.record("k2", entry("sha256:b")))).toBe("STORE_ERROR");
  });
});
