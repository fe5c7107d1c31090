/**
 * The operator console's runtime services (what apps/api exposes): operators and tokens,
 * the run browser, the approval inbox, receipt DAGs and evidence bundles, the catalog.
 * Built by `createRuntime`; nothing here is a module-level singleton.
 */
import type { RunSkillDeps } from "../run/context.js";
import type { SignaturePolicy } from "../receipts/index.js";
import { consoleStoreExtension } from "../store/console-store.js";
import type { ConsoleStore } from "../store/console-store.js";
import { approvalServices } from "./approvals.js";
import { evidenceServices } from "./evidence.js";
import { operatorServices } from "./operators.js";
import { runServices } from "./runs.js";
import { recoveryServices } from "./recovery.js";

export type { ApprovalServices, DecideResult, GatePolicy, PendingApproval } from "./approvals.js";
export type { DagEdge, DagNode, EvidenceBundle, EvidenceServices } from "./evidence.js";
export type { Operator, OperatorServices } from "./operators.js";
export { roleAtLeast } from "./operators.js";
export type { DecisionView, RunDetail, RunServices, RunSummary } from "./runs.js";
export { INTERRUPTED_REQUEST } from "./recovery.js";
export type { HostJob, RecoveryOutcome, RecoveryServices } from "./recovery.js";
export { consoleInput } from "./validate.js";
export type { ConsoleInputName, ConsoleInputs } from "./validate.js";

/** Console services over one runtime's stores. */
export function createConsoleServices(deps: {
  runDeps: RunSkillDeps;
  readPolicy: () => SignaturePolicy;
}) {
  const store = (): ConsoleStore => deps.runDeps.state().attach(consoleStoreExtension);
  const now = (): Date => deps.runDeps.now();
  const randomHex = (n: number): string => deps.runDeps.randomHex(n);
  const base = { store, now, randomHex };
  return {
    operators: operatorServices(base),
    runs: runServices({ state: () => deps.runDeps.state(), store }),
    approvals: approvalServices({ ...base, runDeps: deps.runDeps }),
    evidence: evidenceServices({
      receiptDir: deps.runDeps.paths.receiptDir,
      state: () => deps.runDeps.state(),
      store,
      policy: deps.readPolicy,
      now,
    }),
    /** Journal of host-executed jobs and recovery of runs a dead host left running. */
    recovery: recoveryServices({ runDeps: deps.runDeps, store }),
    /** Records who started a run (before it starts) so separation of duties can be enforced. */
    recordInitiator(runId: string, operator: { id: string; username: string }): void {
      store().recordInitiator({
        runId,
        operatorId: operator.id,
        username: operator.username,
        createdAt: now().toISOString(),
      });
    },
    /** A fresh run id for a run the console starts (`run_console_<16 hex>`). */
    newRunId(): string {
      return `run_console_${randomHex(8)}`;
    },
  };
}

/** The console services' surface (`runtime.console`). */
export type ConsoleServices = ReturnType<typeof createConsoleServices>;
