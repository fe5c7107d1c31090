/**
 * Test helpers for native tools (not for production code): a temp directory layout with a
 * workspace, a sibling directory outside it, a skill package and a run directory, and a
 * complete `ToolContext` whose parts can be overridden one by one.
 */
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { RuntimeError } from "../errors.js";
import { createTaintSet } from "../redaction.js";
import { createMemoryEffectLedger as createMemoryEffectLedgerImpl } from "../tools/effect-ledger.js";
import type {
  HttpTransport,
  JsonRecord,
  ReceiptLookup,
  ToolContext,
  ToolResult,
} from "../tools/types.js";

/** PATH for child processes in tests (tests never read the host environment). */
export const TEST_PATH = "/usr/local/bin:/usr/bin:/bin";

/** A temp layout: `<base>/workspace` (with `skill/` and `.runx/runs/test-run`) and `<base>/outside`. */
export interface TestWorkspace {
  base: string;
  workspace: string;
  /** A sibling of the workspace that tools must never reach. */
  outside: string;
  packageDir: string;
  runDir: string;
  /** Removes the whole layout. */
  cleanup(): void;
}

/** Creates a fresh {@link TestWorkspace} under the OS temp directory (canonical paths). */
export function makeTempWorkspace(prefix = "runx-tools-"): TestWorkspace {
  const base = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  const workspace = join(base, "workspace");
  const outside = join(base, "outside");
  const packageDir = join(workspace, "skills", "demo");
  const runDir = join(workspace, ".runx", "runs", "test-run");
  for (const dir of [workspace, outside, packageDir, runDir]) mkdirSync(dir, { recursive: true });
  return {
    base,
    workspace,
    outside,
    packageDir,
    runDir,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

export { createMemoryEffectLedger } from "../tools/effect-ledger.js";

/** A temp workspace layout and a tool context rooted in it (the usual per-test set-up). */
export function makeLayoutContext(overrides: Partial<ToolContext> = {}): {
  layout: TestWorkspace;
  ctx: ToolContext;
} {
  const layout = makeTempWorkspace();
  const ctx = makeToolContext({
    workspaceRoot: layout.workspace,
    packageDir: layout.packageDir,
    runDir: layout.runDir,
    ...overrides,
  });
  return { layout, ctx };
}

/** A transport that refuses every request; HTTP tool tests pass their own. */
const noHttp: HttpTransport = {
  request: () => Promise.reject(new Error("no HTTP transport in this test context")),
};

/** A receipt lookup over an empty store; receipt tool tests pass a real one. */
const noReceipts: ReceiptLookup = {
  read: (id) =>
    Promise.reject(
      new RuntimeError("RECEIPT_NOT_FOUND", `receipt ${id} is not in this test context's store`),
    ),
  referencing: () => Promise.resolve([]),
  tree: (id) =>
    Promise.reject(
      new RuntimeError("RECEIPT_NOT_FOUND", `receipt ${id} is not in this test context's store`),
    ),
};

/**
 * A complete ToolContext for tests. Without `workspaceRoot` a fresh temp workspace is created
 * (prefer passing the dirs of a {@link makeTempWorkspace} you clean up).
 */
export function makeToolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  const layout =
    overrides.workspaceRoot === undefined ? makeTempWorkspace("runx-tool-context-") : undefined;
  const workspaceRoot = overrides.workspaceRoot ?? (layout as TestWorkspace).workspace;
  return {
    workspaceRoot,
    packageDir: layout?.packageDir ?? workspaceRoot,
    runId: "test-run",
    stepId: "test-step",
    signal: new AbortController().signal,
    scopes: [],
    baseEnv: { PATH: TEST_PATH },
    allowPrivateNetwork: false,
    http: noHttp,
    providers: new Map(),
    effects: createMemoryEffectLedgerImpl(),
    runDir: layout?.runDir ?? join(workspaceRoot, ".runx", "runs", "test-run"),
    stateRoots: [],
    approvals: new Map(),
    taint: createTaintSet(),
    receipts: noReceipts,
    now: () => new Date("2026-01-01T00:00:00.000Z"),
    ...overrides,
  };
}

/** The output of a successful result; throws with the failure code otherwise. */
export function successOutput(result: ToolResult): JsonRecord {
  if (result.status !== "success") {
    const detail =
      result.status === "failure" ? `${result.code}: ${result.summary}` : result.status;
    throw new Error(`expected success, got ${detail}`);
  }
  return result.output;
}

/**
 * The packet data of a successful result whose output is one named packet envelope
 * `{<name>: {data}}` (every native tool's success shape); throws when the
 * result failed or the output is not exactly such an envelope.
 */
export function successData(result: ToolResult): JsonRecord {
  const output = successOutput(result);
  const names = Object.keys(output);
  const envelope = output[names[0] ?? ""];
  if (
    names.length !== 1 ||
    envelope === null ||
    typeof envelope !== "object" ||
    Array.isArray(envelope) ||
    Object.keys(envelope).join(",") !== "data" ||
    envelope.data === null ||
    typeof envelope.data !== "object" ||
    Array.isArray(envelope.data)
  ) {
    throw new Error(`expected one named packet envelope, got ${JSON.stringify(output)}`);
  }
  return envelope.data;
}

/** The failure code of a result, or its status when it did not fail. */
export function failureCode(result: ToolResult): string {
  return result.status === "failure" ? result.code : `(${result.status})`;
}

/** Every entry under `dir` with its kind and content (file text, link target): compare before/after. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (current: string): void => {
    for (const name of readdirSync(current).sort()) {
      const path = join(current, name);
      const rel = relative(dir, path);
      const info = lstatSync(path);
      if (info.isSymbolicLink()) out[rel] = `link:${readlinkSync(path)}`;
      else if (info.isDirectory()) {
        out[rel] = "dir";
        walk(path);
      } else out[rel] = `file:${readFileSync(path, "utf8")}`;
    }
  };
  walk(dir);
  return out;
}
