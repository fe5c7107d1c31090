/**
 * The composition root: builds every service from explicit options and hands out one
 * `Runtime`. The CLI and the API are thin shells over this object. Nothing here is a
 * module-level singleton; expensive parts (SQLite, signer validation) are created on first use.
 * The core (runs, history, verification: runtime-core.ts) is what most CLI commands need; the
 * console, catalog, adapter, registry and data services are added here.
 */
import { createConsoleServices } from "./console/index.js";
import type { ConsoleServices } from "./console/index.js";
import { RuntimeError } from "./errors.js";
import type { TrustRecord } from "./adapters/trust.js";
import {
  cancelDispatch,
  dispatchAttempts,
  dispatchState,
  listAdapters,
  trust as trustAdapter,
} from "./services/adapters.js";
import type { AdapterListing, DispatchAttemptView, DispatchState } from "./services/adapters.js";
import { dispatchLogs } from "./services/dispatch-logs.js";
import type { DispatchLogView } from "./services/dispatch-logs.js";
import { LocalRegistry } from "./registry/local.js";
import { catalogServices } from "./services/catalog.js";
import type { CatalogServices } from "./services/catalog.js";
import type { listDataSources } from "./data/views.js";
import type { DataOperationResult } from "./data/model.js";
import { createRuntimeCore } from "./runtime-core.js";
import type { CoreRuntime, RuntimeOptions } from "./runtime-core-types.js";

export { createRuntimeCore } from "./runtime-core.js";
export { RUNTIME_RELEASE } from "./runtime-core-types.js";
export type { CoreRuntime, RuntimeOptions } from "./runtime-core-types.js";

/** The runtime's public surface. */
export interface Runtime extends CoreRuntime {
  /** Adapter definitions, trust, dispatch attempts and cancellation. */
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
    /** The kept (bounded, scrubbed) logs of a run's attempts, checked against their receipts. */
    logs(runId: string): DispatchLogView[];
  };
  /** Operator console services: operators, runs, approvals, receipt DAGs, evidence. */
  readonly console: ConsoleServices;
  /** The local skill registry (package, publish, search, read, add). */
  registry(): LocalRegistry;
  /**
   * Publishes a package to the local registry after its harness passes (a package whose
   * harness cases fail is never published; a package without cases publishes directly).
   */
  publishSkill(
    dir: string,
    options: Parameters<LocalRegistry["publish"]>[1],
  ): ReturnType<LocalRegistry["publish"]>;
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
}

/** Builds a runtime. Cheap: nothing is opened until a service needs it. */
export function createRuntime(options: RuntimeOptions): Runtime {
  const env = options.env;
  let registry: LocalRegistry | undefined;
  const getRegistry = (): LocalRegistry =>
    (registry ??= new LocalRegistry({
      root: parts.registryRoot(),
      workspaceRoot: core.paths.root,
      runxDir: core.paths.runxDir,
      runxHome: options.runxHome,
      env,
      now: () => parts.runDeps.now(),
    }));
  const { runtime: core, parts } = createRuntimeCore(options, { registry: getRegistry });
  const { runDeps, readPolicy } = parts;
  const paths = core.paths;

  let consoleServices: ConsoleServices | undefined;
  let catalog: CatalogServices | undefined;
  const bindingEnv = () => ({ workspaceRoot: paths.root, env: env ?? {} });

  const getCatalog = (): CatalogServices =>
    (catalog ??= catalogServices({ root: paths.root, registry: getRegistry }));

  return {
    ...core,
    get console() {
      return (consoleServices ??= createConsoleServices({
        runDeps,
        readPolicy,
        catalog: getCatalog,
        stateBackend: parts.stateBackend,
        postgres: parts.postgres,
        asyncState: parts.asyncState,
      }));
    },
    get catalog() {
      return getCatalog();
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
    adapters: {
      list: () => listAdapters(paths.root, paths.runxDir),
      trust: (id) =>
        trustAdapter(paths.root, paths.runxDir, id, "runx:principal:local_operator", runDeps.now()),
      attempts: (runId) =>
        dispatchAttempts(
          paths.runxDir,
          { receiptDir: paths.receiptDir, policy: readPolicy() },
          runId,
        ),
      state: async (runId) => {
        let packageDir: string | undefined;
        try {
          packageDir = (await (await parts.asyncState()).getRun(runId)).packageDir;
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
      cancel: (runId) => cancelDispatch(paths.runxDir, runId, runDeps.now()),
      logs: (runId) => dispatchLogs(paths.runxDir, runId),
    },
    registry: getRegistry,
    async publishSkill(dir, publishOptions) {
      const { report } = await core.harness({ targets: [dir] });
      if (report.case_count > 0 && report.status !== "passed") {
        throw new RuntimeError(
          "REGISTRY_INVALID",
          `the package's harness must pass before it is published (${report.assertion_error_count} assertion error(s); first: ${report.assertion_errors[0] ?? "none"})`,
          { assertion_errors: report.assertion_errors.slice(0, 10) },
        );
      }
      return getRegistry().publish(dir, publishOptions);
    },
  };
}
