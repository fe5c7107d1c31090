import { createWriteStream, existsSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Receipt } from "../receipts/model.js";
import { serializeReceipt } from "../receipts/shape.js";
import type { StoreVerification } from "../services/verify.js";
import { openStateStore } from "../store/open.js";
import { runx } from "../testing/cli.js";
import { consoleFixture } from "../testing/console-fixture.js";
import { PER_STEP, STEPS, TOTAL, sealedAt } from "../testing/wide-run.js";
import type { ConsoleFixture } from "../testing/console-fixture.js";
import type { EvidenceBundle } from "./evidence-bundle.js";

/** A receipt of this file's run (testing/wide-run.ts), dated from 2026-05-01. */
function sealed(name: string, i: number, children: Receipt[] = []): Receipt {
  return sealedAt("2026-05-01T00:00:00Z", name, i, children);
}

let fx: ConsoleFixture;
let runId: string;
let root: Receipt;
let leaves: Receipt[];
let bundleFile: string;
let inProcess: StoreVerification;

beforeAll(async () => {
  // On a memory file system where there is one: 20,000 files written and removed again
  // would cost the test minutes on a busy disk.
  const tmp = process.env.TMPDIR;
  if (existsSync("/dev/shm")) process.env.TMPDIR = "/dev/shm";
  try {
    fx = consoleFixture();
  } finally {
    if (tmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmp;
  }
  // A real run through the runtime, then given a large receipt tree as its root.
  const env = await fx.runtime.runSkill({
    ref: "skills/echo",
    inputs: { message: { value: "hi" } },
    secretEnv: [],
  });
  runId = env.run_id;
  const receiptDir = join(fx.ws.root, ".runx", "receipts");
  // Files written as the store writes them, less the fsync per file (the export reads only
  // the files; 20,000 durable writes would cost the test minutes on a busy disk).
  const put = (r: Receipt): void =>
    writeFileSync(join(receiptDir, fileName(r)), serializeReceipt(r));
  const steps: Receipt[] = [];
  leaves = [];
  let n = 0;
  for (let s = 0; s < STEPS; s++) {
    const own = Array.from({ length: PER_STEP }, () => sealed(`leaf-${n}`, n++));
    const step = sealed(`step-${s}`, n++, own);
    for (const r of [...own, step]) put(r);
    steps.push(step);
    leaves.push(...own);
  }
  root = sealed("big-run", n++, steps);
  put(root);
  const state = openStateStore({ path: join(fx.ws.root, ".runx", "state.sqlite") });
  try {
    state.updateRun(runId, { receiptId: root.id });
  } finally {
    state.close();
  }
  bundleFile = join(fx.ws.root, "bundle.json");
  await pipeline(
    Readable.from(fx.runtime.console.evidence.bundleText(runId)),
    createWriteStream(bundleFile),
  );
  // The reference: this thread alone, the bundle read from the file in pieces.
  inProcess = await fx.runtime.verifyBundle(
    Readable.from(readFileSync(bundleFile), { objectMode: false }) as AsyncIterable<Uint8Array>,
    { label: "bundle:bundle.json", workers: 0 },
  );
}, 300_000);

afterAll(() => fx.cleanup(), 60_000);

function fileName(r: Receipt): string {
  return `sha256-${r.id.slice("sha256:".length)}.json`;
}

async function verifyCli(
  file: string,
  env: Record<string, string> = {},
): Promise<{ code: number | null; report: StoreVerification; stderr: string }> {
  const r = await runx(fx.ws, ["verify", "--bundle", file, "--json"], { env, timeoutMs: 120_000 });
  return { code: r.code, report: r.json<StoreVerification>(), stderr: r.stderr };
}

describe("a 20,000-receipt evidence bundle", () => {
  it("is written in pieces in the bundle format: the run's every receipt, as stored", () => {
    const text = readFileSync(bundleFile, "utf8");
    const bundle = JSON.parse(text) as EvidenceBundle;
    // Exactly what JSON.stringify gives for the whole bundle.
    expect(text).toBe(JSON.stringify(bundle));
    expect(Object.keys(bundle)).toEqual([
      "schema",
      "run_id",
      "root_receipt_id",
      "generated_at",
      "index",
      "receipts",
      "approvals",
      "verification",
    ]);
    expect(bundle).toMatchObject({ schema: "runx.evidence_bundle.v1", run_id: runId });
    expect(bundle.root_receipt_id).toBe(root.id);
    expect(bundle.index.entries).toHaveLength(TOTAL);
    const ids = bundle.index.entries.map((e) => e.receipt_id);
    expect(ids).toEqual([...ids].sort());
    const files = Object.keys(bundle.receipts);
    expect(files).toHaveLength(TOTAL);
    // Breadth first from the root.
    expect(files[0]).toBe(`sha256-${root.id.slice(7)}.json`);
    const leaf = leaves[4242] as Receipt;
    expect(bundle.receipts[`sha256-${leaf.id.slice(7)}.json`]).toBe(serializeReceipt(leaf));
    expect(bundle.verification).toHaveLength(1);
    expect(bundle.verification[0]).toMatchObject({
      root_receipt_id: root.id,
      receipt_count: TOTAL,
      valid: true,
    });
  });

  it("verifies with the CLI on every core, in bounded memory, as one thread does", async () => {
    expect(inProcess.valid).toBe(true);
    expect(inProcess.receipt_count).toBe(TOTAL);
    // A heap smaller than the bundle: held whole (its text and its parse), it could not be.
    const size = readFileSync(bundleFile).length;
    expect(size).toBeGreaterThan(40 * 1024 * 1024);
    // Counts the verification workers the CLI starts.
    const preload = fx.ws.write(
      "count-workers.cjs",
      [
        'const wt = require("node:worker_threads");',
        "let n = 0;",
        "const Base = wt.Worker;",
        "wt.Worker = class extends Base { constructor(...a) { super(...a); n++; } };",
        'process.on("exit", () => process.stderr.write(`workers started: ${n}\\n`));',
        "",
      ].join("\n"),
    );
    const { code, report, stderr } = await verifyCli("bundle.json", {
      NODE_OPTIONS: `--max-old-space-size=64 --require ${preload}`,
    });
    expect(code, stderr).toBe(0);
    expect(stderr).toContain(`workers started: ${availableParallelism() - 1}`);
    expect(report).toEqual(JSON.parse(JSON.stringify(inProcess)));
  }, 120_000);

  it("fails when one receipt in it was edited, naming that receipt", async () => {
    const leaf = leaves[12345] as Receipt;
    const text = readFileSync(bundleFile, "utf8");
    const uri = leaf.subject.ref.uri;
    const edited = text.replace(uri, uri.replace("leaf-", "LEAF-"));
    expect(edited).not.toBe(text);
    writeFileSync(join(fx.ws.root, "edited.json"), edited);
    const { code, report } = await verifyCli("edited.json");
    expect(code).toBe(3);
    expect(report.valid).toBe(false);
    const findings = report.trees.flatMap((t) => t.findings);
    expect(findings.length).toBeGreaterThan(0);
    expect(findings.every((f) => f.path.includes(leaf.id))).toBe(true);
    expect(findings.map((f) => f.code)).toContain("seal_digest_mismatch");
    // The same in one thread.
    const single = await fx.runtime.verifyBundle(edited, {
      label: "bundle:edited.json",
      workers: 0,
    });
    expect(report).toEqual(JSON.parse(JSON.stringify(single)));
  }, 120_000);
});
