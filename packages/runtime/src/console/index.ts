/**
 * The operator console's runtime services (what apps/api exposes): operators and tokens,
 * the run browser, the approval inbox, receipt DAGs and evidence bundles, the catalog.
 * Built by `createRuntime`; nothing here is a module-level singleton.
 */
import type { RunSkillDeps } from "../run/context.js";
import type { SignaturePolicy } from "../receipts/index.js";
import type { CatalogServices } from "../services/catalog.js";
import { RuntimeError } from "../errors.js";
import { consoleStoreExtension } from "../store/console-store.js";
import type { ConsoleStore, OperatorRole } from "../store/console-store.js";
import { asyncSqliteIdentityStore } from "../store/identity-port.js";
import type { AsyncIdentityStore } from "../store/identity-port.js";
import type { PgState } from "../store/pg/connect.js";
import type { AsyncStateStore } from "../store/port.js";
import { sqliteExclusive } from "../store/sqlite-async.js";
import type { StateBackend } from "../store/state-backend.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";
import type { AllowSpawn } from "../run/run-skill.js";
import { approvalServices, consoleSpawnGrant } from "./approvals.js";
import { evidenceServices } from "./evidence.js";
import { operatorServices, roleAtLeast } from "./operators.js";
import { runServices } from "./runs.js";
import { recoveryServices } from "./recovery.js";
import type { HostJob } from "./recovery.js";

export type { ApprovalServices, DecideResult, GatePolicy, PendingApproval } from "./approvals.js";
export type { DagEdge, DagNode, DagPage, EvidenceBundle, EvidenceServices } from "./evidence.js";
export type { ApiTokenView, Operator, OperatorListing, OperatorServices } from "./operators.js";
export { roleAtLeast } from "./operators.js";
export type {
  DecisionView,
  PendingRequestView,
  RunDetail,
  RunListItem,
  RunListPage,
  RunServices,
  RunSummary,
} from "./runs.js";
export type {
  RunTimeline,
  TimelineEvent,
  TimelineEventKind,
  TimelineRequest,
  TimelineStep,
  TimelineStepStatus,
} from "./timeline.js";
export { INTERRUPTED_REQUEST } from "./recovery.js";
export type { HostJob, RecoveryOutcome, RecoveryServices } from "./recovery.js";
export { consoleInput } from "./validate.js";
export type { ConsoleInputName, ConsoleInputs } from "./validate.js";

/** Console services over one runtime's stores. */
export function createConsoleServices(deps: {
  runDeps: RunSkillDeps;
  readPolicy: () => SignaturePolicy;
  /** The catalog: the console starts only what it lists. */
  catalog: () => CatalogServices;
  /** The store RUNX_STATE_URL selected, and its pool when that is PostgreSQL. */
  stateBackend: StateBackend;
  postgres: () => Promise<PgState>;
  /** Run state through the async port (the converted readers use it). */
  asyncState: () => Promise<AsyncStateStore>;
}) {
  const store = (): ConsoleStore => deps.runDeps.state().attach(consoleStoreExtension);
  /** Operators, tokens and sessions: in the shared database, or beside the run state in SQLite. */
  const identity = (): Promise<AsyncIdentityStore> => {
    if (deps.stateBackend.kind === "postgres") {
      // The pool is opened once (runtime-core.ts); the adapter over it is a few closures.
      return Promise.all([deps.postgres(), import("../store/pg/identity-store.js")]).then(
        ([pg, { pgIdentityStore }]) => pgIdentityStore(pg),
      );
    }
    const state = deps.runDeps.state();
    return Promise.resolve(
      asyncSqliteIdentityStore(
        state.attach(consoleStoreExtension),
        state.label,
        sqliteExclusive(state),
      ),
    );
  };
  const now = (): Date => deps.runDeps.now();
  const randomHex = (n: number): string => deps.runDeps.randomHex(n);
  const base = { store, now, randomHex };
  const approvals = approvalServices({ ...base, runDeps: deps.runDeps });
  return {
    operators: operatorServices({ identity, now, randomHex }),
    runs: runServices({ state: () => deps.runDeps.state(), store }),
    approvals,
    evidence: evidenceServices({
      receiptDir: deps.runDeps.paths.receiptDir,
      state: deps.asyncState,
      store,
      policy: deps.readPolicy,
      now,
    }),
    /** Journal of host-executed jobs and recovery of runs a dead host left running. */
    recovery: recoveryServices({ runDeps: deps.runDeps, store }),
    /**
     * Records who started a run (before it starts) so separation of duties can be enforced,
     * and whether they granted its adapter dispatches spawn authority (deny by default).
     */
    recordInitiator(
      runId: string,
      operator: { id: string; username: string; role?: OperatorRole },
      options: { allowSpawn?: boolean } = {},
    ): void {
      if (
        options.allowSpawn === true &&
        (operator.role === undefined || !roleAtLeast(operator.role, "approver"))
      ) {
        throw new RuntimeError(
          "FORBIDDEN",
          `operator ${operator.username} may not grant spawn authority`,
          { role: operator.role ?? null },
        );
      }
      store().recordInitiator({
        runId,
        operatorId: operator.id,
        username: operator.username,
        createdAt: now().toISOString(),
        allowSpawn: options.allowSpawn === true,
      });
    },
    /** The spawn authority the console granted a run when it was started (null: none). */
    spawnGrant(runId: string): Exclude<AllowSpawn, boolean> | null {
      return consoleSpawnGrant(store(), runId);
    },
    /**
     * Executes one host job (the API's worker pool and inline executor): a start, a gate
     * release or answers, each carrying the spawn authority the run was started with from the
     * console, and nothing else (a run started elsewhere gets none here).
     */
    async runJob(job: HostJob, signal?: AbortSignal): Promise<SkillRunEnvelope> {
      const live = signal ?? new AbortController().signal;
      const grant = consoleSpawnGrant(store(), job.runId);
      const allowSpawn = grant !== null ? { allowSpawn: grant } : {};
      if (job.kind === "release") return approvals.release(job, live);
      if (job.kind === "answer") {
        const { resumeRun } = await import("../run/resume.js");
        return resumeRun(
          deps.runDeps,
          {
            runId: job.runId,
            document: { answers: job.answers },
            ...allowSpawn,
            origin: { via: "console", actor: job.by ?? null, reason: job.note ?? null },
          },
          live,
        );
      }
      // Only catalog entries, whatever the caller sent: a host path, `..` or a graph document
      // outside skills/ would run a package nobody put in this workspace.
      const ref = await deps.catalog().startRef(job.ref);
      const { runSkill } = await import("../run/run-skill.js");
      return runSkill(
        deps.runDeps,
        {
          ref,
          ...(job.runner !== undefined ? { runner: job.runner } : {}),
          inputs: Object.fromEntries(
            Object.entries(job.inputs).map(([k, value]) => [k, { value: value as never }]),
          ),
          secretEnv: [],
          runId: job.runId,
          ...allowSpawn,
          origin: { via: "console", actor: store().getInitiator(job.runId)?.username ?? null },
        },
        live,
      );
    },
    /** A fresh run id for a run the console starts (`run_console_<16 hex>`). */
    newRunId(): string {
      return `run_console_${randomHex(8)}`;
    },
  };
}

/** The console services' surface (`runtime.console`). */
export type ConsoleServices = ReturnType<typeof createConsoleServices>;
