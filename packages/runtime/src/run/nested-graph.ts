/**
 * A graph step whose nested skill runner is itself a graph: the nested graph runs as a
 * sub-graph of the enclosing run, under its governance. Its scopes attenuate (they must lie
 * inside what the enclosing step was granted), its approval and agent pauses pause the whole
 * run and resume into it, and its step receipts become children of the one receipt the
 * enclosing step seals, so the root graph receipt commits the whole tree.
 */
import { RuntimeError } from "../errors.js";
import { createGraphState, nextActions, resumeGraph } from "../graph/index.js";
import type { ApprovalDecisionInput, GraphDoc, GraphState, GraphStep } from "../graph/index.js";
import type { JsonObject } from "../parser/json.js";
import type { GraphRunner } from "../parser/runner-types.js";
import type { LoadedSkillPackage } from "../packages/resolve.js";
import { receiptBodyDigest } from "../receipts/index.js";
import type { Receipt } from "../receipts/index.js";
import { stepKey } from "./context.js";
import type { RunScope } from "./context.js";
import type { RunRequest } from "../contracts/envelope.js";
import { boundGraph } from "./graph-prepare.js";
import { pauseReasonCode, toSyncPoint } from "./graph-stop.js";
import { runtimeToolCatalog, runToolRoots } from "./tools.js";
import type { AdvanceGraph } from "./graph-stop.js";
import type { SealOutcome } from "./graph-stop.js";

/** Graphs nested deeper than this are refused (a runaway chain of packages). */
const MAX_NESTING = 16;

/** What a paused nested graph keeps on its enclosing step until the step runs again. */
interface SavedSubgraph {
  state: GraphState;
  /** The deferred receipt the step sealed when the nested graph paused. */
  paused_receipt: { id: string; digest: string };
}

/** How the nested graph ended, as the enclosing step seals it. */
export type NestedGraphEnd =
  | { kind: "sealed"; outcome: SealOutcome; status: "success" | "failure" | "declined" }
  | {
      kind: "paused";
      outcome: SealOutcome;
      status: "needs_approval" | "needs_agent";
      requests: RunRequest[];
      /** Completed by the caller with the deferred receipt once it is sealed. */
      save: (receipt: Receipt) => SavedSubgraph;
    };

function graphKey(pkg: { packageDir: string; graphDocumentPath?: string }, runner: string): string {
  return `${pkg.graphDocumentPath ?? pkg.packageDir}#${runner}`;
}

function isSaved(value: unknown): value is SavedSubgraph {
  if (typeof value !== "object" || value === null) return false;
  const saved = value as Partial<SavedSubgraph>;
  return (
    typeof saved.state === "object" &&
    saved.state !== null &&
    typeof saved.paused_receipt?.id === "string" &&
    typeof saved.paused_receipt.digest === "string"
  );
}

/**
 * The scopes the nested graph may grant its own steps. The enclosing step's grant bounds it;
 * a nested runner that declares scopes narrows it further but may not widen it. No grant on
 * either side means no attenuation (as for a root graph without one).
 */
function nestedGrant(
  step: GraphStep,
  granted: readonly string[],
  own: readonly string[],
): string[] {
  if (granted.length === 0) return [...own];
  if (own.length === 0) return [...granted];
  const outside = own.filter((s) => !granted.includes(s));
  if (outside.length > 0) {
    throw new RuntimeError(
      "POLICY_DENIED",
      `step ${step.id}: the nested graph declares scope(s) ${outside.join(", ")} outside the step's grant (${granted.join(", ")})`,
      { step: step.id, scopes: outside },
    );
  }
  return [...own];
}

/** Runs (or resumes) the nested graph of one step until it pauses or ends. */
export async function runNestedGraph(
  scope: RunScope,
  step: GraphStep,
  nested: { pkg: LoadedSkillPackage; runner: GraphRunner },
  granted: readonly string[],
  inputs: JsonObject,
  approvals: Record<string, { approved: boolean; reason?: string }>,
  answers: Record<string, unknown>,
  saved: unknown,
  advanceGraph: AdvanceGraph,
  inheritedPolicyApproval?: readonly string[],
): Promise<NestedGraphEnd> {
  const key = graphKey(nested.pkg, nested.runner.name);
  const chain = scope.nest?.chain ?? [graphKey(scope.prep.pkg, scope.prep.runner.name)];
  if (chain.includes(key)) {
    throw new RuntimeError(
      "GRAPH_INVALID",
      `step ${step.id}: nested graph runner '${nested.runner.name}' of ${nested.pkg.name} runs itself again (${[...chain, key].join(" -> ")})`,
      { step: step.id },
    );
  }
  if (chain.length >= MAX_NESTING) {
    throw new RuntimeError(
      "GRAPH_INVALID",
      `step ${step.id}: graphs are nested more than ${MAX_NESTING} deep`,
      { step: step.id },
    );
  }
  const sub: RunScope = {
    ...scope,
    prep: {
      ...scope.prep,
      pkg: nested.pkg,
      runner: { ...nested.runner, scopes: nestedGrant(step, granted, nested.runner.scopes) },
    },
    nest: { path: [...(scope.nest?.path ?? []), step.id], chain: [...chain, key] },
  };
  // A nested package's tool steps resolve against its own inferred tool roots, not the
  // enclosing package's (tool-catalogs/local-tools.ts `skillDir`); containment stays the workspace.
  const tools = runtimeToolCatalog(runToolRoots(sub));
  const doc: GraphDoc = await boundGraph(scope.deps, nested.pkg, nested.runner, tools, chain);
  let state: GraphState;
  let previous: { type: string; uri: string; locator: string } | undefined;
  if (saved === undefined) {
    state = createGraphState(doc, inputs, {
      graphId: `${scope.prep.runId}/${stepKey(scope, step.id)}`,
      ...(inheritedPolicyApproval === undefined ? {} : { inheritedPolicyApproval }),
    });
  } else {
    if (!isSaved(saved)) {
      throw new RuntimeError(
        "GRAPH_STATE_INVALID",
        `step ${step.id}: the saved state of its nested graph is malformed`,
        { step: step.id },
      );
    }
    // The decisions recorded on the enclosing graph for the requests this graph paused on.
    const pause = nextActions(doc, saved.state)[0];
    const pending = new Set(
      pause?.kind === "pause"
        ? pause.requests.filter((r) => r.kind === "approval").map((r) => r.id)
        : [],
    );
    const decisions: Record<string, ApprovalDecisionInput> = {};
    for (const [id, d] of Object.entries(approvals)) {
      if (!pending.has(id)) continue;
      decisions[id] = {
        approved: d.approved,
        actor: "human",
        ...(d.reason !== undefined ? { reason: d.reason } : {}),
      };
    }
    state = resumeGraph(doc, saved.state, { approvals: decisions });
    previous = {
      type: "receipt",
      uri: `runx:receipt:${saved.paused_receipt.id}`,
      locator: saved.paused_receipt.digest,
    };
  }
  const end = await advanceGraph(sub, doc, tools, state, answers);
  const lineage = {
    ...(previous !== undefined ? { previous, resume_ref: previous } : {}),
    sync: end.state.sync.map(toSyncPoint),
  };
  const metadata = { nested_graph: doc.name, nested_runner: nested.runner.name };
  const base = { output: {}, children: end.children, lineage, metadata };
  const { stop } = end;
  switch (stop.kind) {
    case "pause":
      return {
        kind: "paused",
        outcome: {
          ...base,
          disposition: "deferred",
          reasonCode: pauseReasonCode(stop.requests),
          summary: `nested graph ${doc.name} is waiting for ${stop.requests.map((r) => r.id).join(", ")}`,
        },
        status: stop.requests.every((r) => r.kind === "approval")
          ? "needs_approval"
          : "needs_agent",
        requests: stop.requests,
        save: (receipt) => ({
          state: end.state,
          paused_receipt: { id: receipt.id, digest: receiptBodyDigest(receipt) },
        }),
      };
    case "complete":
      return {
        kind: "sealed",
        outcome: {
          ...base,
          output: stop.result,
          disposition: "closed",
          reasonCode: "graph_closed",
        },
        status: "success",
      };
    case "fail": {
      const disposition = stop.failure.disposition as "failed" | "blocked" | "declined";
      return {
        kind: "sealed",
        outcome: {
          ...base,
          disposition,
          reasonCode: stop.failure.code.toLowerCase(),
          summary: `nested graph ${doc.name}: ${stop.failure.reason}`,
        },
        status: disposition === "declined" ? "declined" : "failure",
      };
    }
    case "killed":
      return {
        kind: "sealed",
        outcome: {
          ...base,
          disposition: "killed",
          reasonCode: "process_killed",
          summary: `nested graph ${doc.name} was interrupted`,
        },
        status: "failure",
      };
  }
}
