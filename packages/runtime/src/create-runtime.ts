/**
 * The composition root: builds every service from explicit options and hands out one
 * `Runtime`. The CLI and (later) the API are thin shells over this object. Nothing here is a
 * module-level singleton; expensive parts (SQLite, signer validation) are created on first use.
 */
import { randomBytes } from "node:crypto";
import { createConsoleServices } from "./console/index.js";
import type { ConsoleServices } from "./console/index.js";
import { readProjectConfig } from "./config.js";
import { isRuntimeError, RuntimeError } from "./errors.js";
import type { ProjectConfig } from "./config.js";
import {
  localDevelopmentPolicy,
  productionPolicy,
  ReceiptStore,
  signerFromEnv,
  verifierFromEnv,
} from "./receipts/index.js";
import type {
  ReceiptSigner,
  ReceiptVerifier,
  SignaturePolicy,
  VerifyVerdict,
} from "./receipts/index.js";
import type { SkillRunEnvelope } from "./run/envelope.js";
import { runSkill } from "./run/run-skill.js";
import type { RunSkillDeps, SkillRequest } from "./run/run-skill.js";
import type { ReceiptProfile, ToolLanes } from "./run/context.js";
import { readResumeDocument } from "./run/resume-document.js";
import { historyDetail, listHistory, pendingRuns } from "./services/history.js";
import type { HistoryDetail, HistoryListing, PendingRun } from "./services/history.js";
import { initGlobal, initProject } from "./services/init.js";
import type { InitResult } from "./services/init.js";
import type { SkillListItem } from "./services/list-skills.js";
import {
  verificationPolicy,
  verifyEvidenceBundle,
  verifyReceiptDocument,
  verifyReceiptStore,
} from "./services/verify.js";
import type { StoreVerification } from "./services/verify.js";
import { openStateStore } from "./store/open.js";
import type { StateStore } from "./store/types.js";
import type { HarnessReport } from "./harness/index.js";
import type { CaseResult } from "./harness/run-case.js";
import { displayPath, workspacePaths } from "./workspace.js";
import type { ProbeRunner } from "./adapters/preflight.js";
import type { TrustRecord } from "./adapters/trust.js";
import {
  cancelDispatch,
  dispatchAttempts,
  dispatchState,
  listAdapters,
  trust as trustAdapter,
} from "./services/adapters.js";
import type { AdapterListing, DispatchAttemptView, DispatchState } from "./services/adapters.js";
import { LocalRegistry, registryRoot } from "./registry/local.js";
import { catalogServices } from "./services/catalog.js";
import type { CatalogServices } from "./services/catalog.js";
import type { listDataSources } from "./data/views.js";
import type { DataOperationResult } from "./data/model.js";
import type { Prepared } from "./run/context.js";
import { prepareRun } from "./run/prepare.js";
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
}

/** The runtime's public surface. */
export interface Runtime {
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
    },
    options?: { signal?: AbortSignal },
  ): Promise<SkillRunEnvelope>;
  /** Continues a paused run with an already parsed resume document (the harness's path). */
  resumeWith(
    request: { runId: string; document: unknown; allowSpawn?: boolean },
    options?: { signal?: AbortSignal },
  ): Promise<SkillRunEnvelope>;
  /** Tree-mode verification of the receipt store. */
  verifyStore(options?: {
    rootId?: string;
    allowLocalDevelopment?: boolean;
  }): Promise<StoreVerification>;
  /** Verifies one receipt document. */
  verifyReceipt(text: string, options?: { allowLocalDevelopment?: boolean }): VerifyVerdict;
  /** Receipts and paused runs. */
  history(options?: {
    limit?: number;
    includeInternal?: boolean;
    includeHarness?: boolean;
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
  pending(): PendingRun[];
  /** One run or receipt in detail. */
  historyDetail(id: string): Promise<HistoryDetail>;
  /** The workspace's skill packages. */
  listSkills(): Promise<{ items: SkillListItem[] }>;
  /** Creates `.runx/` (or `$RUNX_HOME` with `global`). */
  init(options?: { global?: boolean }): Promise<InitResult>;
  /** Adapter definitions, trust, dispatch attempts and cancellation (issue 8). */
  adapters: {
    list(): AdapterListing[];
    trust(id: string): TrustRecord;
    /** A run's dispatch attempts, oldest first, each checked against its signed receipt. */
    attempts(runId: string): Promise<DispatchAttemptView[]>;
    /** A run's recorded attempts plus the attempts in flight (the console's run page). */
    state(runId: string): Promise<DispatchState>;
    /**
     * Asks the running dispatch of a run (in any process) to stop; DISPATCH_NOT_RUNNING when
     * no attempt of the run is in flight.
     */
    cancel(runId: string): { run_id: string; requested: true };
  };
  /** Operator console services: operators, runs, approvals, receipt DAGs, evidence. */
  readonly console: ConsoleServices;
  /** Verifies a `runx.evidence_bundle.v1` document offline (`runx verify --bundle`). */
  verifyBundle(
    text: string,
    options: { label: string; allowLocalDevelopment?: boolean },
  ): StoreVerification;
  /** The local skill registry (package, publish, search, read, add). */
  registry(): LocalRegistry;
  /**
   * Publishes a package to the local registry after its harness passes (§7.4: a package whose
   * harness cases fail is never published; a package without cases publishes directly).
   */
  publishSkill(
    dir: string,
    options: Parameters<LocalRegistry["publish"]>[1],
  ): ReturnType<LocalRegistry["publish"]>;
  /**
   * Resolves a skill reference (path, name or registry ref) to its package, selected runner and
   * package/closure digests without running it (what `runx mcp serve` binds at start-up).
   */
  prepareSkill(request: { ref: string; runner?: string }): Promise<Prepared>;
  /** The console's catalog: workspace skills and local-registry records with inputs and tiers. */
  readonly catalog: CatalogServices;
  /** Configured data sources (non-secret view) and the implicit local:// rule. */
  dataSources(): Promise<ReturnType<typeof listDataSources>>;
  /** The newest events of one data stream (1–500). */
  dataTail(target: {
    source: string;
    resource: string;
    aggregateId: string;
    limit: number;
  }): Promise<DataOperationResult>;
  /** Releases the state store. */
  close(): void;
}

/** Builds a runtime. Cheap: nothing is opened until a service needs it. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const env = options.env;
  const paths = workspacePaths({
    root: options.workspaceRoot,
    receiptDir: options.receiptDir,
    receiptDirEnv: env.RUNX_RECEIPT_DIR,
  });
  const storeLabel = displayPath(paths.root, paths.receiptDir);
  const now = options.now ?? (() => new Date());
  const randomHex = options.randomHex ?? ((n: number) => randomBytes(n).toString("hex"));
  const readStdin = options.readStdin ?? (() => process.stdin);

  let signer: ReceiptSigner | undefined;
  let state: StateStore | undefined;
  let config: ProjectConfig | undefined;
  let receipts: ReceiptStore | undefined;

  const getSigner = (): ReceiptSigner => (signer ??= signerFromEnv(env));
  const verifier = (): ReceiptVerifier | undefined => verifierFromEnv(env) ?? signerVerifier();
  const signerVerifier = (): ReceiptVerifier | undefined => {
    const s = signer ?? trySigner();
    return s?.mode === "production" ? s.verifier : undefined;
  };
  const trySigner = (): ReceiptSigner | undefined => {
    try {
      return getSigner();
    } catch {
      return undefined;
    }
  };
  /** Reads (history) accept local and, when keys exist, real signatures. */
  const readPolicy = (): SignaturePolicy => localDevelopmentPolicy(verifier());
  const writePolicy = (): SignaturePolicy => {
    const s = getSigner();
    return s.mode === "production"
      ? productionPolicy(s.verifier)
      : localDevelopmentPolicy(verifier());
  };
  const getState = (): StateStore =>
    (state ??= openStateStore({ path: paths.stateDb, label: ".runx/state.sqlite" }));
  let registry: LocalRegistry | undefined;
  const getRegistry = (): LocalRegistry =>
    (registry ??= new LocalRegistry({
      root: registryRoot({
        explicit: options.registryDir,
        env,
        runxHome: options.runxHome,
        workspaceRoot: paths.root,
      }),
      workspaceRoot: paths.root,
      runxDir: paths.runxDir,
      runxHome: options.runxHome,
      env,
      now,
    }));
  const getReceipts = (): ReceiptStore =>
    (receipts ??= new ReceiptStore({
      dir: paths.receiptDir,
      policy: writePolicy(),
      label: storeLabel,
    }));

  const runDeps: RunSkillDeps = {
    paths,
    env,
    runtimeRelease: RUNTIME_RELEASE,
    signer: getSigner,
    receipts: getReceipts,
    state: getState,
    config: () => (config ??= readProjectConfig(paths.configFile)),
    now,
    randomHex,
    readStdin,
    registry: getRegistry,
    ...(options.receiptProfile !== undefined ? { receiptProfile: options.receiptProfile } : {}),
    ...(options.toolLanes !== undefined ? { toolLanes: options.toolLanes } : {}),
    ...(options.adapterProbe !== undefined ? { adapterProbe: options.adapterProbe } : {}),
    ...(options.onAdapterSpawn !== undefined ? { onAdapterSpawn: options.onAdapterSpawn } : {}),
    agentConfig: async () => {
      // Loaded on demand: only agent runs read the user's agent configuration.
      const { loadAgentSettings } = await import("./agents/config.js");
      try {
        return await loadAgentSettings(options.runxHome);
      } catch (error) {
        if (isRuntimeError(error) && error.code === "AGENT_NOT_CONFIGURED") return undefined;
        throw error;
      }
    },
  };

  let consoleServices: ConsoleServices | undefined;
  let catalog: CatalogServices | undefined;
  const bindingEnv = () => ({ workspaceRoot: paths.root, env: env ?? {} });

  return {
    paths,
    get console() {
      return (consoleServices ??= createConsoleServices({ runDeps, readPolicy }));
    },
    get catalog() {
      return (catalog ??= catalogServices({ root: paths.root, registry: () => this.registry() }));
    },
    // The data store's modules load on first use (the CLI's start-up never pays for them).
    async dataSources() {
      const { listDataSources } = await import("./data/views.js");
      return listDataSources(bindingEnv());
    },
    async dataTail(target) {
      const { tailStream } = await import("./data/views.js");
      return tailStream({ ...bindingEnv(), now: () => runDeps.now() }, target);
    },
    verifyBundle(text, opts) {
      return verifyEvidenceBundle(text, {
        label: opts.label,
        policy: verificationPolicy(verifier(), opts.allowLocalDevelopment === true),
      });
    },
    runSkill(request, opts = {}) {
      return runSkill(runDeps, request, opts.signal ?? new AbortController().signal);
    },
    async resume(request, opts = {}) {
      const document = await readResumeDocument(request.source, {
        workspaceRoot: paths.root,
        runxDir: paths.runxDir,
        runId: request.runId,
        readStdin,
      });
      // Loaded on demand: resuming pulls in the agent and graph machinery.
      const { resumeRun } = await import("./run/resume.js");
      return resumeRun(
        runDeps,
        {
          runId: request.runId,
          document,
          ...(request.packageDigest !== undefined ? { packageDigest: request.packageDigest } : {}),
          ...(request.executionClosureDigest !== undefined
            ? { executionClosureDigest: request.executionClosureDigest }
            : {}),
          ...(request.allowSpawn === true ? { allowSpawn: true } : {}),
        },
        opts.signal ?? new AbortController().signal,
      );
    },
    async resumeWith(request, opts = {}) {
      const { resumeRun } = await import("./run/resume.js");
      return resumeRun(runDeps, request, opts.signal ?? new AbortController().signal);
    },
    adapters: {
      list: () => listAdapters(paths.root, paths.runxDir),
      trust: (id) =>
        trustAdapter(paths.root, paths.runxDir, id, "runx:principal:local_operator", now()),
      attempts: (runId) =>
        dispatchAttempts(
          paths.runxDir,
          { receiptDir: paths.receiptDir, policy: readPolicy() },
          runId,
        ),
      state: (runId) => {
        let packageDir: string | undefined;
        try {
          packageDir = getState().getRun(runId).packageDir;
        } catch {
          packageDir = undefined;
        }
        return dispatchState(
          paths.runxDir,
          { receiptDir: paths.receiptDir, policy: readPolicy() },
          runId,
          packageDir !== undefined ? { root: paths.root, packageDir } : undefined,
        );
      },
      cancel: (runId) => cancelDispatch(paths.runxDir, runId, now()),
    },
    verifyStore(opts = {}) {
      return verifyReceiptStore({
        dir: paths.receiptDir,
        label: storeLabel,
        policy: verificationPolicy(verifier(), opts.allowLocalDevelopment === true),
        ...(opts.rootId !== undefined ? { rootId: opts.rootId } : {}),
      });
    },
    verifyReceipt(text, opts = {}) {
      return verifyReceiptDocument(text, {
        verifier: verifier(),
        allowLocalDevelopment: opts.allowLocalDevelopment === true,
      });
    },
    history(opts = {}) {
      return listHistory({
        receiptDir: paths.receiptDir,
        storeLabel,
        policy: readPolicy(),
        state: getState(),
        limit: opts.limit ?? 50,
        includeInternal: opts.includeInternal === true,
        includeHarness: opts.includeHarness === true,
      });
    },
    async harness(request) {
      const { runHarness } = await import("./harness/index.js");
      const outcome = await runHarness({
        workspaceRoot: paths.root,
        targets: request.targets,
        receiptDir: paths.receiptDir,
        env,
        signal: request.signal ?? new AbortController().signal,
        ...(request.onCase !== undefined ? { onCase: request.onCase } : {}),
      });
      const state = getState();
      state.transaction(() => {
        for (const c of outcome.cases) {
          if (c.receipt === undefined) continue;
          state.indexReceipt({
            receiptId: c.receipt.id,
            skillName: c.name,
            disposition: c.receipt.seal.disposition,
            createdAt: c.receipt.created_at,
            fileName: `sha256-${c.receipt.id.slice("sha256:".length)}.json`,
            harness: true,
          });
        }
      });
      return outcome;
    },
    pending() {
      const state = getState();
      return pendingRuns(state);
    },
    historyDetail(id) {
      return historyDetail({
        receiptDir: paths.receiptDir,
        storeLabel,
        policy: readPolicy(),
        state: getState(),
        id,
      });
    },
    async listSkills() {
      // Loaded on demand: listing parses every package, which other commands never need.
      const { listWorkspaceSkills } = await import("./services/list-skills.js");
      return listWorkspaceSkills(paths.root);
    },
    init(opts = {}) {
      return opts.global === true ? initGlobal(options.runxHome) : initProject(paths);
    },
    registry: getRegistry,
    async publishSkill(dir, publishOptions) {
      const { report } = await this.harness({ targets: [dir] });
      if (report.case_count > 0 && report.status !== "passed") {
        throw new RuntimeError(
          "REGISTRY_INVALID",
          `the package's harness must pass before it is published (${report.assertion_error_count} assertion error(s); first: ${report.assertion_errors[0] ?? "none"})`,
          { assertion_errors: report.assertion_errors.slice(0, 10) },
        );
      }
      return getRegistry().publish(dir, publishOptions);
    },
    prepareSkill(request) {
      return prepareRun(runDeps, request);
    },
    close() {
      state?.close();
      state = undefined;
    },
  };
}
