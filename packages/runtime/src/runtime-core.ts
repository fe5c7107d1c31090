/**
 * The runtime's core, composed by `createRuntime` (create-runtime.ts): runs, resumes, history,
 * verification, harness, init. It is also what the CLI's run, history and verify commands
 * build directly, so their start-up never loads the console, catalog, adapter or registry
 * services (the registry of a run loads only when the run names a registry package).
 */
import { randomHex as secureRandomHex } from "./crypto/random.js";
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
import type { SkillRunEnvelope } from "./contracts/envelope.js";
import type { RunOrigin } from "./run/origin.js";
import type { AllowSpawn, RunSkillDeps, SkillRequest } from "./run/run-skill.js";
import type { ReceiptProfile, RegistryResolver, ToolLanes } from "./run/context.js";
import { historyDetail, listHistory, pendingRuns } from "./services/history.js";
import type { HistoryDetail, HistoryListing, PendingRun } from "./services/history.js";
import type { InitResult } from "./services/init.js";
import type { SkillListItem } from "./services/list-skills.js";
import { verificationPolicy, verifyReceiptDocument, verifyRunStore } from "./services/verify.js";
import type { StoreVerification } from "./services/verify.js";
import type { CreatedRange } from "./services/verify-store.js";
import type { FileCheck } from "./receipts/stored-receipt.js";
import { openStateStore } from "./store/open.js";
import type { AsyncStateStore } from "./store/port.js";
import { asyncSqliteStateStore } from "./store/sqlite-async.js";
import type { PgState } from "./store/pg/connect.js";
import { notOnPostgres, stateBackendFromEnv } from "./store/state-backend.js";
import type { StateBackend } from "./store/state-backend.js";
import type { StateStore } from "./store/types.js";
import type { CaseResult, HarnessReport } from "./harness/report.js";
import { displayPath, workspacePaths } from "./workspace.js";
import type { ProbeRunner } from "./adapters/preflight.js";
import type { LocalRegistry } from "./registry/local.js";
import { registryRoot } from "./registry/root.js";
import type { Prepared } from "./run/context.js";
import type { CredentialReadiness } from "./credentials/readiness.js";
import type { InspectSkillRequest, SkillInspection } from "./services/inspect-skill.js";
import { prepareRun } from "./run/prepare.js";
import { NO_GATE_BINDINGS } from "./policy/gate-resolution.js";
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

/**
 * Builds the core. Cheap: nothing is opened until a service needs it. `registry` supplies the
 * local registry when the host has it at hand; otherwise a run loads it on demand.
 */
export function createRuntimeCore(
  options: RuntimeOptions,
  hooks: { registry?: () => LocalRegistry } = {},
): { runtime: CoreRuntime; parts: RuntimeCoreParts } {
  const env = options.env;
  const paths = workspacePaths({
    root: options.workspaceRoot,
    receiptDir: options.receiptDir,
    receiptDirEnv: env.RUNX_RECEIPT_DIR,
  });
  const storeLabel = displayPath(paths.root, paths.receiptDir);
  const now = options.now ?? (() => new Date());
  const randomHex = options.randomHex ?? secureRandomHex;
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
  const readPolicy = (): SignaturePolicy => localDevelopmentPolicy(verifier());
  const writePolicy = (): SignaturePolicy => {
    const s = getSigner();
    return s.mode === "production"
      ? productionPolicy(s.verifier)
      : localDevelopmentPolicy(verifier());
  };
  // Checked here, so a bad RUNX_STATE_URL fails every entry point at once, naming the variable.
  const stateBackend = stateBackendFromEnv(env);
  let postgres: Promise<PgState> | undefined;
  const getPostgres = (): Promise<PgState> => {
    if (stateBackend.kind !== "postgres") {
      return Promise.reject(
        new RuntimeError("INTERNAL", "the PostgreSQL state store is not selected"),
      );
    }
    if (postgres !== undefined) return postgres;
    // Loaded on demand: the embedded default never loads the PostgreSQL driver.
    const opening = import("./store/pg/connect.js").then(({ openPgState }) =>
      openPgState({
        url: stateBackend.url,
        ...(stateBackend.password !== undefined ? { password: stateBackend.password } : {}),
        ...(stateBackend.passwordFile !== undefined
          ? { passwordFile: stateBackend.passwordFile }
          : {}),
      }),
    );
    postgres = opening;
    // A failed open is retried by the next caller rather than cached.
    void opening.catch(() => {
      if (postgres === opening) postgres = undefined;
    });
    return postgres;
  };
  const getState = (): StateStore => {
    // What still reads the SQLite store directly (the console's tables, the harness index)
    // is refused rather than writing a local file the other instances never see.
    if (stateBackend.kind === "postgres") {
      throw notOnPostgres(stateBackend.label, "the console's run state (approvals, run jobs)");
    }
    return (state ??= openStateStore({ path: paths.stateDb, label: ".runx/state.sqlite" }));
  };
  /** The async port over the selected store (what converted callers read and write). */
  let asyncSqlite: { of: StateStore; port: AsyncStateStore } | undefined;
  let asyncPg: Promise<AsyncStateStore> | undefined;
  const getAsyncState = (): Promise<AsyncStateStore> => {
    if (stateBackend.kind === "postgres") {
      return (asyncPg ??= Promise.all([getPostgres(), import("./store/pg/state-store.js")]).then(
        ([pg, { pgStateStore }]) => pgStateStore(pg, { clock: now }),
        (error: unknown) => {
          asyncPg = undefined;
          throw error;
        },
      ));
    }
    // Over the same connection as the synchronous store (one mutex, one write lock), and
    // rebuilt when `close()` has replaced that store.
    const sync = getState();
    if (asyncSqlite?.of !== sync) asyncSqlite = { of: sync, port: asyncSqliteStateStore(sync) };
    return Promise.resolve(asyncSqlite.port);
  };
  const getReceipts = (): ReceiptStore =>
    (receipts ??= new ReceiptStore({
      dir: paths.receiptDir,
      policy: writePolicy(),
      label: storeLabel,
    }));
  const getRegistryRoot = (): string =>
    registryRoot({
      explicit: options.registryDir,
      env,
      runxHome: options.runxHome,
      workspaceRoot: paths.root,
    });
  let loadedRegistry: LocalRegistry | undefined;
  const registry = (): RegistryResolver => {
    if (hooks.registry !== undefined) return hooks.registry();
    const root = getRegistryRoot();
    return {
      root,
      async materializeForRun(ref, opts) {
        // Loaded on demand: only a run that names a registry package reads the registry.
        const { LocalRegistry } = await import("./registry/local.js");
        loadedRegistry ??= new LocalRegistry({
          root,
          workspaceRoot: paths.root,
          runxDir: paths.runxDir,
          runxHome: options.runxHome,
          env,
          now,
        });
        return loadedRegistry.materializeForRun(ref, opts);
      },
    };
  };

  const runDeps: RunSkillDeps = {
    paths,
    env,
    workspaceEnv: options.workspaceEnv ?? env,
    dotenvNames: options.dotenvNames ?? new Set(),
    runxHome: options.runxHome,
    runtimeRelease: RUNTIME_RELEASE,
    signer: getSigner,
    receipts: getReceipts,
    state: getState,
    runState: getAsyncState,
    gateBindings: async () => {
      if (stateBackend.kind === "postgres") return NO_GATE_BINDINGS;
      const { consoleStoreExtension } = await import("./store/console-store.js");
      return getState().attach(consoleStoreExtension);
    },
    config: () => (config ??= readProjectConfig(paths.configFile)),
    now,
    randomHex,
    readStdin,
    registry,
    stateRoots: () => {
      // An unusable registry setting (a remote URL) is reported by the registry itself; the
      // fence still holds $RUNX_HOME, where the registry's keys live.
      let registryDir: string[];
      try {
        registryDir = [getRegistryRoot()];
      } catch {
        registryDir = [];
      }
      return [options.runxHome, ...registryDir];
    },
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

  const harness: CoreRuntime["harness"] = async (request) => {
    // Refused before any case runs: the cases' scratch runtimes would write their runs into
    // the shared database, and the harness index below still reads the SQLite store.
    if (stateBackend.kind === "postgres") throw notOnPostgres(stateBackend.label, "runx harness");
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
  };

  const runtime: CoreRuntime = {
    paths,
    async verifyBundle(source, opts) {
      // Loaded on demand, as the store pass is (worker_threads and os come with the pool).
      const { verifyEvidenceBundle } = await import("./services/verify-bundle.js");
      return verifyEvidenceBundle(source, {
        label: opts.label,
        policy: verificationPolicy(verifier(), opts.allowLocalDevelopment === true),
        ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
        ...(opts.progress !== undefined ? { progress: opts.progress } : {}),
      });
    },
    async runSkill(request, opts = {}) {
      // Loaded on demand, as resume is: the run machinery (runners, process supervision, and
      // with them Node's child_process, net and stream modules) is not part of a history,
      // verify or list command's start-up.
      const { runSkill } = await import("./run/run-skill.js");
      return runSkill(runDeps, request, opts.signal ?? new AbortController().signal);
    },
    async resume(request, opts = {}) {
      const { readResumeDocument } = await import("./run/resume-document.js");
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
          // A resume document read from a file or stdin is `runx resume`'s path.
          origin: request.origin ?? { via: "cli" },
        },
        opts.signal ?? new AbortController().signal,
      );
    },
    async resumeWith(request, opts = {}) {
      const { resumeRun } = await import("./run/resume.js");
      return resumeRun(runDeps, request, opts.signal ?? new AbortController().signal);
    },
    async verifyStore(opts = {}) {
      // Loaded on demand: the verification pool brings worker_threads and os, which no other
      // command's start-up needs.
      const { verifyReceiptStore } = await import("./services/verify-store.js");
      return verifyReceiptStore({
        dir: paths.receiptDir,
        label: storeLabel,
        policy: verificationPolicy(verifier(), opts.allowLocalDevelopment === true),
        runxDir: paths.runxDir,
        ...(opts.rootId !== undefined ? { rootId: opts.rootId } : {}),
        ...(opts.range !== undefined ? { range: opts.range } : {}),
        ...(opts.progress !== undefined ? { progress: opts.progress } : {}),
        ...(opts.onFile !== undefined ? { onFile: opts.onFile } : {}),
      });
    },
    async verifyRun(runId, opts = {}) {
      return verifyRunStore({
        dir: paths.receiptDir,
        label: storeLabel,
        policy: verificationPolicy(verifier(), opts.allowLocalDevelopment === true),
        state: await getAsyncState(),
        runId,
      });
    },
    verifyReceipt(text, opts = {}) {
      return verifyReceiptDocument(text, {
        verifier: verifier(),
        allowLocalDevelopment: opts.allowLocalDevelopment === true,
      });
    },
    async history(opts = {}) {
      return listHistory({
        receiptDir: paths.receiptDir,
        storeLabel,
        policy: readPolicy(),
        state: await getAsyncState(),
        limit: opts.limit ?? 50,
        includeInternal: opts.includeInternal === true,
        includeHarness: opts.includeHarness === true,
        ...(opts.before !== undefined ? { before: opts.before } : {}),
        ...(opts.progress !== undefined ? { progress: opts.progress } : {}),
      });
    },
    harness,
    async pending() {
      return pendingRuns(await getAsyncState());
    },
    async historyDetail(id) {
      return historyDetail({
        receiptDir: paths.receiptDir,
        storeLabel,
        policy: readPolicy(),
        state: await getAsyncState(),
        id,
      });
    },
    async listSkills() {
      // Loaded on demand: listing parses every package, which other commands never need.
      const { listWorkspaceSkills } = await import("./services/list-skills.js");
      return listWorkspaceSkills(paths.root);
    },
    async init(opts = {}) {
      const { initGlobal, initProject } = await import("./services/init.js");
      return opts.global === true ? initGlobal(options.runxHome) : initProject(paths);
    },
    prepareSkill(request) {
      return prepareRun(runDeps, request);
    },
    async inspectSkill(request) {
      const { inspectSkill } = await import("./services/inspect-skill.js");
      return inspectSkill(runDeps, request);
    },
    async credentialReadiness(prep) {
      const { runnerCredentialReadiness } = await import("./services/inspect-skill.js");
      return runnerCredentialReadiness(runDeps, prep.pkg, prep.runner);
    },
    stateBackend,
    async ready() {
      if (stateBackend.kind === "postgres") await getPostgres();
    },
    close() {
      if (postgres !== undefined) {
        const closing = postgres;
        postgres = undefined;
        void closing.then(
          (pg) => pg.close(),
          () => undefined,
        );
      }
      if (options.releaseStateAtExit === true) return;
      state?.close();
      state = undefined;
    },
  };
  return {
    runtime,
    parts: {
      runDeps,
      readPolicy,
      receipts: getReceipts,
      registryRoot: getRegistryRoot,
      stateBackend,
      postgres: getPostgres,
      asyncState: getAsyncState,
    },
  };
}
