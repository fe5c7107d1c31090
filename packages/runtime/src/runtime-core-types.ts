/**
 * What a host gives the runtime core and what it gets back: `RuntimeOptions` (workspace, home,
 * environment, clock, harness lanes), `CoreRuntime` (runs, resumes, verification, history,
 * harness, init, inspection) and `RuntimeCoreParts` (what `createRuntime` builds the console,
 * catalog and registry services from), with the release identity every closure digest
 * carries. Types and one constant: the implementation is runtime-core.ts.
 */
import type { ProbeRunner } from "./adapters/preflight.js";
import type { SkillRunEnvelope } from "./contracts/envelope.js";
import type { CredentialReadiness } from "./credentials/readiness.js";
import type { CaseResult, HarnessReport } from "./harness/report.js";
import type { ReceiptStore, SignaturePolicy, VerifyVerdict } from "./receipts/index.js";
import type { FileCheck } from "./receipts/stored-receipt.js";
import type { Prepared, ReceiptProfile, ToolLanes } from "./run/context.js";
import type { RunOrigin } from "./run/origin.js";
import type { AllowSpawn, RunSkillDeps, SkillRequest } from "./run/run-skill.js";
import type { HistoryDetail, HistoryListing, PendingRun } from "./services/history.js";
import type { InitResult } from "./services/init.js";
import type { InspectSkillRequest, SkillInspection } from "./services/inspect-skill.js";
import type { SkillListItem } from "./services/list-skills.js";
import type { CreatedRange } from "./services/verify-store.js";
import type { StoreVerification } from "./services/verify.js";
import type { PgState } from "./store/pg/connect.js";
import type { AsyncStateStore } from "./store/port.js";
import type { StateBackend } from "./store/state-backend.js";
import type { WorkspacePaths } from "./workspace.js";

/** The runtime release identity; part of every execution-closure digest. */
export const RUNTIME_RELEASE = "runx-ts@0.1.0";

/** Everything the runtime needs from its host. */
export interface RuntimeOptions {
  workspaceRoot: string;
  runxHome: string;
  /** Explicit receipt directory (`--receipt-dir`). */
  receiptDir?: string | undefined;
  /** The host environment: signer/verifier keys, RUNX_RECEIPT_DIR, the child-process baseline. */
  env: Readonly<Record<string, string | undefined>>;
  /**
   * The workspace snapshot runners and credential resolution read (process env, then the
   * workspace `.env` for missing names); `env` when unset. runx's own settings (signer keys,
   * RUNX_RECEIPT_DIR) keep coming from `env` alone.
   */
  workspaceEnv?: Readonly<Record<string, string | undefined>>;
  /** Names of `workspaceEnv` whose value came from `.env` (tainted when delivered). */
  dotenvNames?: ReadonlySet<string>;
  now?: () => Date;
  randomHex?: (bytes: number) => string;
  readStdin?: () => AsyncIterable<Uint8Array | string>;
  /** Receipt shaping (`live` by default; the harness replays with `harness`). */
  receiptProfile?: ReceiptProfile;
  /** Harness fixture lanes for native tools (never set for a live run). */
  toolLanes?: ToolLanes;
  /** Replacement adapter preflight probe runner (tests only). */
  adapterProbe?: ProbeRunner;
  /** Spy called right before an adapter process spawns (tests only). */
  onAdapterSpawn?: () => void;
  /** Explicit local registry directory (`--registry-dir`); else RUNX_REGISTRY_DIR, else $RUNX_HOME/registry. */
  registryDir?: string | undefined;
  /**
   * The process ends right after the runtime's work (a CLI command): `close()` leaves the state
   * store open for the exit to release. Closing SQLite's last connection checkpoints the WAL
   * into the database and syncs both, milliseconds a short command would pay every time; an
   * exit without close leaves the WAL, which the next open reads (nothing committed is lost)
   * and later commits checkpoint once it grows (SQLite's automatic checkpoint).
   */
  releaseStateAtExit?: boolean;
}

/** The core of the runtime's public surface (see `Runtime` for the rest). */
export interface CoreRuntime {
  readonly paths: WorkspacePaths;
  /** Runs a skill to a sealed, paused or refused envelope. */
  runSkill(request: SkillRequest, options?: { signal?: AbortSignal }): Promise<SkillRunEnvelope>;
  /**
   * Continues a paused run with a resume document (`{answers, approvals}`) read from a file or
   * `-` (stdin).
   */
  resume(
    request: {
      runId: string;
      source: string;
      packageDigest?: string;
      executionClosureDigest?: string;
      /** `--allow-spawn`: adapter dispatches continued by this resume may launch. */
      allowSpawn?: boolean;
      /** The entry point resuming (the run ledger's `resumed` line); `cli` when absent. */
      origin?: RunOrigin;
    },
    options?: { signal?: AbortSignal },
  ): Promise<SkillRunEnvelope>;
  /** Continues a paused run with an already parsed resume document (the harness's path). */
  resumeWith(
    request: { runId: string; document: unknown; allowSpawn?: AllowSpawn; origin?: RunOrigin },
    options?: { signal?: AbortSignal },
  ): Promise<SkillRunEnvelope>;
  /** Tree-mode verification of the receipt store. */
  verifyStore(options?: {
    rootId?: string;
    /** Only the trees holding a receipt created in this window. */
    range?: CreatedRange;
    allowLocalDevelopment?: boolean;
    /** Told after each receipt file checked. */
    progress?: (done: number, total: number) => void;
    /** Told about each file, in order, as soon as it is checked (streamed findings). */
    onFile?: (check: FileCheck) => void;
  }): Promise<StoreVerification>;
  /** Verifies one run's receipt tree, reading only its receipts. */
  verifyRun(
    runId: string,
    options?: { allowLocalDevelopment?: boolean },
  ): Promise<StoreVerification>;
  /** Verifies one receipt document. */
  verifyReceipt(text: string, options?: { allowLocalDevelopment?: boolean }): VerifyVerdict;
  /** Receipts and paused runs. */
  history(options?: {
    limit?: number;
    includeInternal?: boolean;
    includeHarness?: boolean;
    /** Start after this position (the previous page's last row). */
    before?: { created_at: string; receipt_id: string };
    /** Told how far a rebuild of a missing or damaged receipt index has got. */
    progress?: (done: number, total: number) => void;
  }): Promise<HistoryListing>;
  /**
   * Replays harness targets (packages or fixture files) in isolated scratch workspaces; the
   * receipts they produce are copied into this runtime's store and marked as harness receipts.
   */
  harness(request: {
    targets: string[];
    signal?: AbortSignal;
    /** Told about every finished case, in order (progress). */
    onCase?: (result: CaseResult) => void;
  }): Promise<{ report: HarnessReport; cases: CaseResult[] }>;
  /** Paused runs with their pending requests (what a console inbox lists). */
  pending(): Promise<PendingRun[]>;
  /** One run or receipt in detail. */
  historyDetail(id: string): Promise<HistoryDetail>;
  /** The workspace's skill packages. */
  listSkills(): Promise<{ items: SkillListItem[] }>;
  /** Creates `.runx/` (or `$RUNX_HOME` with `global`). */
  init(options?: { global?: boolean }): Promise<InitResult>;
  /**
   * Verifies a `runx.evidence_bundle.v1` document offline (`runx verify --bundle`), whole or
   * as it is read (its text in pieces): on every core from 2,000 receipts (`workers`: threads
   * besides this one, 0 for none), `progress` told after each receipt.
   */
  verifyBundle(
    source: string | AsyncIterable<string | Uint8Array>,
    options: {
      label: string;
      allowLocalDevelopment?: boolean;
      workers?: number;
      progress?: (done: number, total: number) => void;
    },
  ): Promise<StoreVerification>;
  /**
   * Resolves a skill reference (path, name or registry ref) to its package, selected runner and
   * package/closure digests without running it (what `runx mcp serve` binds at start-up).
   */
  prepareSkill(request: { ref: string; runner?: string }): Promise<Prepared>;
  /** `runx skill inspect`: the package, its selected runner and that runner's readiness. */
  inspectSkill(request: InspectSkillRequest): Promise<SkillInspection>;
  /**
   * The readiness of the credential a prepared run's runner declares (undefined when none):
   * names and source only, never the material.
   */
  credentialReadiness(prep: Prepared): Promise<CredentialReadiness | undefined>;
  /**
   * Opens the selected state store now (PostgreSQL: connects and applies migrations), so a
   * server fails at start-up rather than on its first request. The embedded SQLite store
   * stays lazy: nothing is opened.
   */
  ready(): Promise<void>;
  /** Which state store RUNX_STATE_URL selected (`label` is safe to print). */
  readonly stateBackend: StateBackend;
  /** Releases the state store (left to the process exit with `releaseStateAtExit`). */
  close(): void;
}

/** What `createRuntime` builds the remaining services from. */
export interface RuntimeCoreParts {
  runDeps: RunSkillDeps;
  /** Reads (history) accept local and, when keys exist, real signatures. */
  readPolicy: () => SignaturePolicy;
  receipts: () => ReceiptStore;
  /** The local registry's directory (`--registry-dir` > RUNX_REGISTRY_DIR > $RUNX_HOME/registry). */
  registryRoot: () => string;
  /** The store RUNX_STATE_URL selected. */
  stateBackend: StateBackend;
  /** The shared PostgreSQL pool, opened (and migrated) on first use; only with `postgres`. */
  postgres: () => Promise<PgState>;
  /** Run state through the async port over the selected store. */
  asyncState: () => Promise<AsyncStateStore>;
}
