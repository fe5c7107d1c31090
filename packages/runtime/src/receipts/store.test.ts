import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { build } from "esbuild";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { buildSkillReceipt } from "./build.js";
import type { Receipt } from "./model.js";
import { serializeReceipt } from "./shape.js";
import { sealReceipt } from "./seal.js";
import { decodeReceipt } from "./shape.js";
import { localDevelopmentSigner, RECEIPT_KEY_ENV, verifierFromEnv } from "./signer.js";
import { ReceiptStore } from "./store.js";
import { acquireStoreLock, receiptStoreLabel, STORE_LOCK_FILE } from "./store-files.js";
import { readUpstreamJson, readUpstreamText, REPO_ROOT } from "./test-oracles.js";
import { localDevelopmentPolicy, productionPolicy } from "./verifier.js";

const run = promisify(execFile);
const AT = "2026-05-18T00:00:00Z";

function receipt(name: string, metadata?: Record<string, string>): Receipt {
  return sealReceipt(
    buildSkillReceipt({
      name,
      step: "default",
      createdAt: AT,
      disposition: "closed",
      reasonCode: "process_closed",
      ...(metadata === undefined ? {} : { metadata }),
    }),
    localDevelopmentSigner(),
  );
}

function fileOf(r: Receipt): string {
  return `sha256-${r.id.slice("sha256:".length)}.json`;
}

async function failure(action: () => Promise<unknown>): Promise<RuntimeError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw error;
  }
  throw new Error("expected the action to fail");
}

let dir: string;
let store: ReceiptStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "runx-receipt-store-"));
  store = new ReceiptStore({ dir, policy: localDevelopmentPolicy() });
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("ReceiptStore writes", () => {
  it("writes compact struct-order JSON atomically with mode 0600 and indexes it", async () => {
    const r = receipt("alpha");
    expect(await store.write(r)).toEqual({ receipt_id: r.id, file_name: fileOf(r), written: true });
    expect(readFileSync(join(dir, fileOf(r)), "utf8")).toBe(serializeReceipt(r));
    expect(statSync(join(dir, fileOf(r))).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual([fileOf(r), "index.jsonl"].sort());
    const lines = readFileSync(join(dir, "index.jsonl"), "utf8").split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      { v: 2, receipt_id: r.id, file_name: fileOf(r), created_at: AT, max_created_at: AT },
    ]);
    const index = await store.loadIndex();
    expect(index.schema).toBe("runx.receipt_store_index.v1");
    expect(index.generated_at).toMatch(/^\d{19,}$/);
    expect(index.entries).toEqual([{ receipt_id: r.id, file_name: fileOf(r), created_at: AT }]);
  });

  it("treats an identical rewrite as a no-op that repairs the index", async () => {
    const r = receipt("alpha");
    await store.write(r);
    rmSync(join(dir, "index.jsonl"));
    expect((await store.write(r)).written).toBe(false);
    expect((await store.loadIndex()).entries.map((e) => e.receipt_id)).toEqual([r.id]);
  });

  it("refuses different bytes under an existing id", async () => {
    const r = receipt("alpha");
    const sameId = receipt("alpha", { note: "unsigned metadata differs" });
    expect(sameId.id).toBe(r.id);
    await store.write(r);
    expect((await failure(() => store.write(sameId))).code).toBe("RECEIPT_ALREADY_EXISTS");
    expect(readFileSync(join(dir, fileOf(r)), "utf8")).toBe(serializeReceipt(r));
  });

  it("verifies content address and proof before writing anything", async () => {
    const r = receipt("alpha");
    const tampered: Receipt = { ...r, seal: { ...r.seal, summary: "changed after sealing" } };
    expect((await failure(() => store.write(tampered))).code).toBe("RECEIPT_INVALID");
    const misaddressed: Receipt = { ...r, id: receipt("beta").id };
    expect((await failure(() => store.write(misaddressed))).code).toBe("RECEIPT_INVALID");
    const strict = new ReceiptStore({ dir, policy: productionPolicy() });
    expect((await failure(() => strict.write(r))).code).toBe("RECEIPT_INVALID");
    expect(readdirSync(dir).filter((name) => name.endsWith(".json"))).toEqual([]);
  });

  it("pre-flights a batch and rejects conflicting bodies before writing", async () => {
    const a = receipt("a");
    const conflicting = receipt("a", { other: "bytes" });
    expect((await failure(() => store.writeAll([receipt("b"), a, conflicting]))).code).toBe(
      "RECEIPT_ALREADY_EXISTS",
    );
    expect(await store.list()).toEqual([]);
    const outcomes = await store.writeAll([a, receipt("b"), a]);
    expect(outcomes).toHaveLength(2);
    expect((await store.list()).length).toBe(2);
  });
});

describe("ReceiptStore reads", () => {
  it("reads back exactly what it wrote and lists by id", async () => {
    const written = [receipt("c"), receipt("a"), receipt("b")];
    for (const r of written) await store.write(r);
    expect(await store.read(written[0]!.id)).toEqual(decodeReceipt(written[0]));
    const ids = (await store.list()).map((r) => r.id);
    expect(ids).toEqual(written.map((r) => r.id).sort());
  });

  it("accepts the colon and underscore spellings of a receipt file", async () => {
    const a = receipt("a");
    const b = receipt("b");
    writeFileSync(join(dir, `${a.id}.json`), serializeReceipt(a));
    writeFileSync(join(dir, `sha256_${b.id.slice(7)}.json`), `${serializeReceipt(b)}\n`);
    expect((await store.read(a.id)).id).toBe(a.id);
    expect((await store.list()).map((r) => r.id)).toEqual([a.id, b.id].sort());
    expect((await store.write(b)).written).toBe(false);
  });

  it("reads an upstream production receipt under its production verifier", async () => {
    const text = readUpstreamText("fixtures/receipt-verify/valid-production/receipt.json");
    const r = decodeReceipt(JSON.parse(text));
    const fixture = readUpstreamJson("fixtures/receipt-verify/verifier.json") as {
      kid: string;
      public_key_base64: string;
    };
    const verifier = verifierFromEnv({
      [RECEIPT_KEY_ENV.verifyKid]: fixture.kid,
      [RECEIPT_KEY_ENV.verifyPublicKey]: fixture.public_key_base64,
    });
    const production = new ReceiptStore({ dir, policy: productionPolicy(verifier) });
    await production.write(r);
    expect((await production.read(r.id)).digest).toBe(r.digest);
    expect((await failure(() => store.read(r.id))).code).toBe("RECEIPT_INVALID");
    // find() leaves the proof to its caller: the receipt comes back under any policy.
    expect((await store.find(r.id))?.digest).toBe(r.digest);
  });

  it("finds one receipt by id without a proof check, and nothing for unknown or invalid ids", async () => {
    const a = receipt("a");
    writeFileSync(join(dir, `${a.id}.json`), serializeReceipt(a));
    expect((await store.find(a.id))?.id).toBe(a.id);
    expect(await store.find(receipt("z").id)).toBeUndefined();
    expect(await store.find("../../etc/passwd")).toBeUndefined();
    writeFileSync(join(dir, fileOf(a)), "{not json");
    expect((await failure(() => store.find(a.id))).code).toBe("RECEIPT_INVALID");
  });

  it("reports unknown, invalid and mismatched ids", async () => {
    const a = receipt("a");
    const b = receipt("b");
    expect((await failure(() => store.read(a.id))).code).toBe("RECEIPT_NOT_FOUND");
    expect((await failure(() => store.read("../../etc/passwd"))).code).toBe("RECEIPT_INVALID");
    writeFileSync(join(dir, fileOf(b)), serializeReceipt(a));
    expect((await failure(() => store.read(b.id))).code).toBe("RECEIPT_INVALID");
    writeFileSync(join(dir, fileOf(a)), '{"schema":"runx.other.v1"}');
    expect((await failure(() => store.read(a.id))).code).toBe("RECEIPT_INVALID");
    writeFileSync(join(dir, fileOf(a)), "{not json");
    expect((await failure(() => store.read(a.id))).code).toBe("RECEIPT_INVALID");
  });

  it("never puts the store path in error messages or details", async () => {
    const a = receipt("a");
    writeFileSync(join(dir, fileOf(a)), "{not json");
    for (const error of [
      await failure(() => store.read(a.id)),
      await failure(() => store.read(receipt("z").id)),
    ]) {
      expect(error.message).not.toContain(dir);
      expect(JSON.stringify(error.details)).not.toContain(dir);
      expect(error.message).toContain("external-receipt-store:");
    }
  });
});

describe("ReceiptStore index", () => {
  it("rebuilds a missing index, reports stale and malformed ones, and repairs on request", async () => {
    const a = receipt("a");
    const b = receipt("b");
    await store.write(a);
    await store.write(b);
    const indexPath = join(dir, "index.jsonl");
    rmSync(indexPath);
    expect((await store.loadIndex()).entries).toHaveLength(2);

    const lines = readFileSync(indexPath, "utf8").split("\n");
    writeFileSync(indexPath, `${lines[0]}\n`);
    expect((await failure(() => store.loadIndex())).code).toBe("RECEIPT_INDEX_STALE");
    expect((await store.rebuildIndex()).entries).toHaveLength(2);
    expect((await store.loadIndex()).entries).toHaveLength(2);

    writeFileSync(indexPath, "[garbage\n");
    expect((await failure(() => store.loadIndex())).code).toBe("RECEIPT_INDEX_MALFORMED");
    writeFileSync(indexPath, `${JSON.stringify({ receipt_id: a.id })}\n`);
    expect((await failure(() => store.loadIndex())).code).toBe("RECEIPT_INDEX_MALFORMED");
    await store.write(receipt("c"));
    expect((await store.loadIndex()).entries).toHaveLength(3);
  });

  it("drops the snapshot index.json of earlier versions when it rebuilds", async () => {
    await store.write(receipt("a"));
    writeFileSync(join(dir, "index.json"), "{}");
    await store.rebuildIndex();
    expect(readdirSync(dir)).not.toContain("index.json");
  });
});

describe("ReceiptStore scan", () => {
  it("tells its progress after every file it reads", async () => {
    for (const name of ["a", "b", "c"]) await store.write(receipt(name));
    const seen: Array<[number, number]> = [];
    const { receipts } = await store.scan((done, total) => seen.push([done, total]));
    expect(receipts).toHaveLength(3);
    expect(seen).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
  });
});

describe("ReceiptStore index journal", () => {
  const journalIds = () =>
    readFileSync(join(dir, "index.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => (JSON.parse(line) as { receipt_id: string }).receipt_id);

  it("appends one line per new receipt and none for an identical rewrite", async () => {
    const written = ["d", "a", "f", "b", "e", "c"].map((name) => receipt(name));
    for (const r of written) await store.write(r);
    await store.write(written[2] as Receipt);
    expect(journalIds()).toEqual(written.map((r) => r.id));
    const index = await store.loadIndex();
    expect(index.entries.map((e) => e.receipt_id)).toEqual(written.map((r) => r.id).sort());
    expect(index.entries.map((e) => e.file_name)).toEqual(
      index.entries.map((e) => `sha256-${e.receipt_id.slice("sha256:".length)}.json`),
    );
  });

  it("tolerates a line repeated by hand: the index has one entry per receipt", async () => {
    const a = receipt("a");
    await store.write(a);
    const text = readFileSync(join(dir, "index.jsonl"), "utf8");
    writeFileSync(join(dir, "index.jsonl"), `${text}${text}`);
    expect((await store.loadIndex()).entries.map((e) => e.receipt_id)).toEqual([a.id]);
  });

  it("does not list the directory on a write: files added out of band stay unindexed until a rebuild", async () => {
    await store.write(receipt("a"));
    const b = receipt("b");
    writeFileSync(join(dir, fileOf(b)), serializeReceipt(b));
    await store.write(receipt("c"));
    expect(journalIds()).not.toContain(b.id);
    expect((await failure(() => store.loadIndex())).code).toBe("RECEIPT_INDEX_STALE");
    expect((await store.rebuildIndex()).entries.map((e) => e.receipt_id)).toContain(b.id);
    // Without the index, the next write rebuilds it from the files (the README's advice).
    const d = receipt("d");
    writeFileSync(join(dir, fileOf(d)), serializeReceipt(d));
    rmSync(join(dir, "index.jsonl"));
    await store.write(receipt("e"));
    expect(journalIds()).toContain(d.id);
    expect((await store.loadIndex()).entries).toHaveLength(5);
  });
});

describe("ReceiptStore lock", () => {
  it("times out while another holder keeps the lock", async () => {
    const release = await acquireStoreLock(dir, "test", 1_000);
    const impatient = new ReceiptStore({
      dir,
      policy: localDevelopmentPolicy(),
      lockTimeoutMs: 30,
    });
    expect((await failure(() => impatient.write(receipt("a")))).code).toBe("IO_ERROR");
    release();
    expect((await impatient.write(receipt("a"))).written).toBe(true);
  });

  it("breaks a lock left behind by a dead process", async () => {
    const { stdout } = await run(process.execPath, [
      "-e",
      "process.stdout.write(String(process.pid))",
    ]);
    writeFileSync(join(dir, STORE_LOCK_FILE), JSON.stringify({ pid: Number(stdout), token: "x" }));
    expect((await store.write(receipt("a"))).written).toBe(true);
    expect(readdirSync(dir)).not.toContain(STORE_LOCK_FILE);
  });

  it("lets two processes write concurrently without losing receipts", async () => {
    const script = join(dir, "writer.mts");
    const source = (file: string) =>
      JSON.stringify(resolve(REPO_ROOT, "packages/runtime/src/receipts", file));
    writeFileSync(
      script,
      [
        `import { buildSkillReceipt } from ${source("build.ts")};`,
        `import { sealReceipt } from ${source("seal.ts")};`,
        `import { localDevelopmentSigner } from ${source("signer.ts")};`,
        `import { ReceiptStore } from ${source("store.ts")};`,
        `import { localDevelopmentPolicy } from ${source("verifier.ts")};`,
        `const [storeDir, prefix] = process.argv.slice(2);`,
        `const store = new ReceiptStore({ dir: storeDir, policy: localDevelopmentPolicy() });`,
        `const make = (name) => sealReceipt(buildSkillReceipt({ name, step: "default", createdAt: "${AT}", disposition: "closed", reasonCode: "process_closed" }), localDevelopmentSigner());`,
        `for (let i = 0; i < 12; i++) {`,
        `  await store.write(make(prefix + "-" + i));`,
        `  await store.write(make("shared"));`,
        `}`,
      ].join("\n"),
    );
    // Bundle the writer with esbuild (a direct dev dependency) so the children run plain JS.
    const bundle = join(dir, "writer.mjs");
    await build({
      entryPoints: [script],
      bundle: true,
      platform: "node",
      format: "esm",
      outfile: bundle,
      logLevel: "silent",
    });
    const storeDir = join(dir, "store");
    const writer = (prefix: string) => run(process.execPath, [bundle, storeDir, prefix]);
    await Promise.all([writer("left"), writer("right")]);
    const shared = new ReceiptStore({ dir: storeDir, policy: localDevelopmentPolicy() });
    expect(await shared.list()).toHaveLength(25);
    expect((await shared.loadIndex()).entries).toHaveLength(25);
    expect(readdirSync(storeDir).filter((name) => name.startsWith("."))).toEqual([]);
  });
});

describe("receiptStoreLabel", () => {
  it("labels stores without absolute paths", () => {
    expect(receiptStoreLabel("/w/.runx/receipts", { workspaceDir: "/w" })).toBe(".runx/receipts");
    expect(receiptStoreLabel("/p/receipts", { workspaceDir: "/w", projectDir: "/p" })).toBe(
      "runx-project:receipts",
    );
    expect(receiptStoreLabel("/elsewhere/r", { workspaceDir: "/w" })).toMatch(
      /^external-receipt-store:[0-9a-f]{16}$/,
    );
  });
});
