/**
 * The runtime's core, composed by `createRuntime` (create-runtime.ts): runs, resumes, history,
 * verification, harness, init. It is also what the CLI's run, history and verify commands
 * build directly, so their start-up never loads the console, catalog, adapter or registry
 * services (the registry of a run loads only when the run names a registry package). Its
 * options and surface are runtime-core-types.ts; the lazily opened state stores
 * store/runtime-stores.ts.
 */
import { randomHex as secureRandomHex } from "./crypto/random.js";
import { readProjectConfig } from "./config.js";
import { isRuntimeError } from "./errors.js";
import type { ProjectConfig } from "./config.js";
import {
  localDevelopmentPolicy,
  productionPolicy,
  ReceiptStore,
  signerFromEnv,
  verifierFromEnv,
} from "./receipts/index.js";
import type { ReceiptSigner, ReceiptVerifier, SignaturePolicy } from "./receipts/index.js";
import type { RunSkillDeps } from "./run/run-skill.js";
import type { RegistryResolver } from "./run/context.js";
import { historyDetail, listHistory, pendingRuns } from "./services/history.js";
import { verificationPolicy, verifyReceiptDocument, verifyRunStore } from "./services/verify.js";
import { runtimeStores } from "./store/runtime-stores.js";
import { notOnPostgres } from "./store/state-backend.js";
import { NO_GATE_BINDINGS } from "./policy/gate-resolution.js";
import { displayPath, workspacePaths } from "./workspace.js";
import type { LocalRegistry } from "./registry/local.js";
import { registryRoot } from "./registry/root.js";
import { prepareRun } from "./run/prepare.js";
import { RUNTIME_RELEASE } from "./runtime-core-types.js";
import type { CoreRuntime, RuntimeCoreParts, RuntimeOptions } from "./runtime-core-types.js";

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
  // Built here, so a bad RUNX_STATE_URL fails every entry point at once, naming the variable.
  const stores = runtimeStores({ env, stateDb: paths.stateDb, now });
  const stateBackend = stores.backend;
  const getState = stores.state;
  const getPostgres = stores.postgres;
  const getAsyncState = stores.asyncState;
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
        runxDir: paths.runxDir,
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
      stores.close({ keepState: options.releaseStateAtExit === true });
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
