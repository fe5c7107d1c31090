/**
 * Recovers what a pending gate releases from the paused run itself: the checkpoint's graph
 * state (verified with the ledger chain when it is read) and the graph document of the
 * package the run is bound to. A paused step is planned again exactly as a resume would plan
 * it (graph/actions.ts `planStep`, then the tool input a graph step hands its tool), so the
 * payload a preview shows is the payload an approval releases; console/effect-preview.ts then
 * checks it against the gate's digests before anything is shown.
 */
import { isRuntimeError } from "../errors.js";
import { isApprovalStep, planStep } from "../graph/actions.js";
import { fanoutGateId, fanoutPauseRequest } from "../graph/fanout.js";
import type { GraphDoc, GraphState, GraphStep } from "../graph/index.js";
import { resolveStepInputs } from "../graph/references.js";
import { scopeOf } from "../graph/state.js";
import { hashCanonical } from "../receipts/index.js";
import type { Checkpoint } from "../run/checkpoint.js";
import type { Prepared, RunSkillDeps } from "../run/context.js";
import type { RunRequest } from "../contracts/envelope.js";
import { boundGraph, loadNestedPackage } from "../run/graph-prepare.js";
import { toolInput } from "../run/graph-steps.js";
import { runtimeToolCatalog, runToolRoots } from "../run/tools.js";
import type { ToolCatalog } from "../tools/catalog.js";
import type { JsonRecord } from "../tools/types.js";
import {
  adapterPreview,
  approvalStepPreview,
  fanoutPreview,
  providerPreview,
  unavailable,
} from "./effect-preview.js";
import { x402Preview } from "./x402-preview.js";
import type { PreviewResult } from "./effect-preview.js";

type ApprovalRequest = Extract<RunRequest, { kind: "approval" }>;

/** Nested graphs followed below the run's own graph (as deep as a run may nest them). */
const MAX_DEPTH = 16;

const isProviderGate = (id: string): boolean => id.startsWith("provider-effect:");

/** One graph level of the paused run: its document, state and package. */
interface Level {
  doc: GraphDoc;
  state: GraphState;
  pkg: Prepared["pkg"];
}

const why = (error: unknown): string =>
  isRuntimeError(error) ? error.message : "an unexpected error";

/**
 * The preview of `gate`, or why there is none. `prep` is the package the run resolves to now
 * (null when it no longer resolves); when it changed since the pause the gate is stale, and a
 * payload resolved through the changed package is refused by the digest checks.
 */
export async function gatePreview(
  deps: RunSkillDeps,
  checkpoint: Checkpoint,
  prep: Prepared | null,
  gate: ApprovalRequest,
): Promise<PreviewResult> {
  if (gate.gate.type === "adapter_dispatch") return adapterPreview(gate.gate);
  // A managed agent's gated call, top level or in a graph's agent step, kept what it proposed.
  if (checkpoint.kind === "agent" || checkpoint.gate_inputs?.[gate.id] !== undefined) {
    return managedAgentPreview(checkpoint, gate);
  }
  if (checkpoint.kind !== "graph" || checkpoint.graph_state === undefined) {
    return unavailable(
      `a ${checkpoint.kind} pause keeps no graph state to read the gate's effect from`,
    );
  }
  if (prep === null || prep.runner.type !== "graph") {
    return unavailable("the run's package no longer resolves to its graph");
  }
  try {
    const catalog = runtimeToolCatalog(runToolRoots({ deps }));
    const doc = await boundGraph(deps, prep.pkg, prep.runner, catalog, []);
    const state = checkpoint.graph_state as GraphState;
    const found = await fromLevel(deps, catalog, { doc, state, pkg: prep.pkg }, gate, 0);
    return found ?? unavailable(`no paused step of the run asks for gate ${gate.id}`);
  } catch (error) {
    return unavailable(`the paused step cannot be read again: ${why(error)}`);
  }
}

/**
 * A gate a managed agent's tool call paused on: the tool input it proposed, kept with the
 * pause, checked against the gate like a graph step's (a pause from before inputs were kept,
 * or an input the redaction changed, fails the digest check and shows as unavailable).
 */
function managedAgentPreview(checkpoint: Checkpoint, gate: ApprovalRequest): PreviewResult {
  const input = checkpoint.gate_inputs?.[gate.id];
  if (input === undefined || typeof input !== "object" || input === null || Array.isArray(input)) {
    return unavailable("the managed agent's proposed tool input is not kept with this pause");
  }
  if (!isProviderGate(gate.id)) {
    return unavailable(`gate ${gate.id} does not release a provider effect`);
  }
  return providerPreview(gate.gate, input as JsonRecord);
}

/** Finds the step (or fanout group) of `level` that paused for `gate` and previews it. */
async function fromLevel(
  deps: RunSkillDeps,
  catalog: ToolCatalog,
  level: Level,
  gate: ApprovalRequest,
  depth: number,
): Promise<PreviewResult | undefined> {
  if (gate.gate.type === "fanout-gate") {
    const record = level.state.sync.findLast(
      (r) => fanoutGateId(r.group_id, r.rule_fired) === gate.id,
    );
    if (record !== undefined && level.state.groups[record.group_id]?.decision === "pause") {
      return sameRequest(fanoutPauseRequest(record), gate)
        ? fanoutPreview(record)
        : unavailable(`fanout group ${record.group_id} no longer asks for this exact gate`);
    }
  }
  for (const step of level.doc.steps) {
    const entry = level.state.steps.find((s) => s.stepId === step.id);
    if (entry === undefined) continue;
    if (entry.status === "paused" && entry.requests?.some((r) => r.id === gate.id)) {
      if (step.kind === "tool") return toolStepPreview(catalog, level, step, gate);
      if (step.kind === "skill" && entry.subgraph !== undefined) {
        return nestedPreview(deps, catalog, level, step, entry.subgraph, gate, depth);
      }
      return unavailable(`step ${step.id} paused for this gate, but keeps nothing to preview`);
    }
    if (isApprovalStep(step) && entry.status === "pending") {
      const found = approvalPreview(level, step, gate);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** A `provider.mutate` step: its tool input resolved again, checked against the gate. */
function toolStepPreview(
  catalog: ToolCatalog,
  level: Level,
  step: GraphStep & { kind: "tool" },
  gate: ApprovalRequest,
): PreviewResult {
  const releases = step.tool === "provider.mutate" || step.tool === "payment.x402_pay";
  if (!releases || !isProviderGate(gate.id)) {
    return unavailable(`step ${step.id} (${step.tool}) does not release a provider effect`);
  }
  const action = planStep(level.doc, level.state, step);
  if (action.kind !== "execute_step") {
    return unavailable(`step ${step.id} no longer resolves its inputs`);
  }
  const input = toolInput(catalog, step, action.resolvedInputs);
  return step.tool === "payment.x402_pay"
    ? x402Preview(gate.gate, input)
    : providerPreview(gate.gate, input);
}

/** A graph `approval` step that plans this gate: its summary and the inputs it binds. */
function approvalPreview(
  level: Level,
  step: GraphStep,
  gate: ApprovalRequest,
): PreviewResult | undefined {
  const action = planStep(level.doc, level.state, step);
  if (action.kind !== "pause") return undefined;
  const request = action.requests.find((r) => r.id === gate.id);
  if (request === undefined) return undefined;
  const inputs = resolveStepInputs(step, scopeOf(level.state));
  const next = level.doc.steps
    .slice(step.index + 1)
    .filter((s) => level.state.steps.find((e) => e.stepId === s.id)?.status === "pending")
    .map((s) => s.id);
  return approvalStepPreview({
    stepId: step.id,
    gate: gate.gate,
    inputs,
    matches: sameRequest(request, gate),
    next,
  });
}

/** A `skill:` step running a nested graph that paused: the same search one level down. */
async function nestedPreview(
  deps: RunSkillDeps,
  catalog: ToolCatalog,
  level: Level,
  step: GraphStep & { kind: "skill" },
  saved: unknown,
  gate: ApprovalRequest,
  depth: number,
): Promise<PreviewResult> {
  const state = (saved as { state?: unknown }).state;
  if (depth >= MAX_DEPTH || typeof state !== "object" || state === null) {
    return unavailable(`the nested graph of step ${step.id} keeps no readable state`);
  }
  const child = await loadNestedPackage(deps, level.pkg, step);
  if (child.runner.type !== "graph") {
    return unavailable(`step ${step.id} no longer runs a nested graph`);
  }
  const doc = await boundGraph(deps, child.pkg, child.runner, catalog, []);
  const found = await fromLevel(
    deps,
    catalog,
    { doc, state: state as GraphState, pkg: child.pkg },
    gate,
    depth + 1,
  );
  return found ?? unavailable(`no step of the nested graph of ${step.id} asks for this gate`);
}

function sameRequest(a: RunRequest, b: RunRequest): boolean {
  return hashCanonical(a) === hashCanonical(b);
}
