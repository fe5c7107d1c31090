/**
 * Cross-step checks of a normalized graph: unique ids, references only to
 * earlier steps, contiguous fanout groups without edges between their branches, guards,
 * `result_from`, and result producers that would certainly emit the same key. Pure.
 */
import type { GraphDoc, GraphStep } from "./document-types.js";
import { invalid } from "./paths.js";
import type { KeyPath } from "./paths.js";
import { stepOutputContract } from "./plan.js";
import { stepRefsIn } from "./references.js";
import type { StepRef } from "./references.js";

interface Edge {
  ref: StepRef;
  at: KeyPath;
  /** Data edges must have succeeded before the step runs; `when` sources are only read. */
  data: boolean;
}

/** Every reference a step makes to another step, with where it is written. */
function edgesOf(step: GraphStep, at: KeyPath): Edge[] {
  const edges: Edge[] = Object.entries(step.context).map(([name, ref]) => ({
    ref,
    at: [...at, "context", name],
    data: true,
  }));
  for (const [name, value] of Object.entries(step.inputs))
    for (const ref of stepRefsIn(value))
      edges.push({ ref, at: [...at, "inputs", name], data: true });
  if (step.when !== undefined)
    edges.push({ ref: step.when.field, at: [...at, "when", "field"], data: false });
  return edges;
}

function checkEdges(doc: GraphDoc, step: GraphStep, at: KeyPath, index: Map<string, number>): void {
  const deps: string[] = [];
  for (const { ref, at: where, data } of edgesOf(step, at)) {
    const source = index.get(ref.step);
    if (source === undefined)
      invalid(`step '${step.id}' references unknown step '${ref.step}'`, where, {
        step_id: step.id,
      });
    if (source >= step.index)
      invalid(
        `step '${step.id}' references step '${ref.step}', which does not run before it`,
        where,
        {
          step_id: step.id,
        },
      );
    const sourceGroup = doc.steps[source]?.fanout_group;
    if (step.fanout_group !== undefined && sourceGroup === step.fanout_group)
      invalid(
        `step '${step.id}' references '${ref.step}' in the same fanout group '${step.fanout_group}'`,
        where,
        { step_id: step.id },
      );
    if (data && !deps.includes(ref.step)) deps.push(ref.step);
  }
  step.depends_on = deps;
  // Upstream rejects `<earlier-step>.<x>` literals in inputs: data between steps uses context.
  for (const [name, value] of Object.entries(step.inputs)) {
    const head = typeof value === "string" ? value.split(".")[0] : undefined;
    const earlier = head === undefined ? undefined : index.get(head);
    if (
      typeof value === "string" &&
      value.includes(".") &&
      earlier !== undefined &&
      earlier < step.index
    )
      invalid(
        `step '${step.id}' input '${name}' looks like a step reference; move it to context`,
        [...at, "inputs", name],
        { step_id: step.id },
      );
  }
}

function checkGroups(doc: GraphDoc, base: KeyPath): void {
  let previous: string | undefined;
  const closed = new Set<string>();
  for (const step of doc.steps) {
    const group = step.fanout_group;
    if (previous !== undefined && group !== previous) closed.add(previous);
    previous = group;
    if (group === undefined) continue;
    const at: KeyPath = [...base, "steps", step.index, "fanout_group"];
    const declared = doc.fanout[group];
    if (declared === undefined)
      invalid(`step '${step.id}' names undeclared fanout group '${group}'`, at, {
        step_id: step.id,
      });
    if (closed.has(group))
      invalid(`fanout group '${group}' steps must be contiguous`, at, { step_id: step.id });
    declared.steps.push(step.id);
  }
  for (const group of Object.values(doc.fanout)) {
    const at: KeyPath = [...base, "fanout", "groups", group.id];
    if (group.steps.length === 0) invalid(`fanout group '${group.id}' has no branch steps`, at);
    if (group.min_success !== undefined && group.min_success > group.steps.length)
      invalid(`min_success exceeds the ${group.steps.length} branches of '${group.id}'`, [
        ...at,
        "min_success",
      ]);
    group.threshold_gates.forEach((gate, i) => {
      if (!group.steps.includes(gate.step))
        invalid(`threshold gate names '${gate.step}', not a branch of '${group.id}'`, [
          ...at,
          "threshold_gates",
          i,
          "step",
        ]);
    });
    group.conflict_gates.forEach((gate, i) => {
      for (const id of gate.steps ?? [])
        if (!group.steps.includes(id))
          invalid(`conflict gate names '${id}', not a branch of '${group.id}'`, [
            ...at,
            "conflict_gates",
            i,
            "steps",
          ]);
    });
  }
}

function checkGuards(doc: GraphDoc, base: KeyPath, index: Map<string, number>): void {
  doc.guards.forEach((guard, i) => {
    const at: KeyPath = [...base, "policy", "guards", i];
    const guarded = index.get(guard.step);
    if (guarded === undefined) invalid(`guard names unknown step '${guard.step}'`, [...at, "step"]);
    // Upstream accepts any field string here. A field that names no step (e.g. `status`)
    // resolves to nothing at run time, so the guard blocks its step with a named reason.
    const source = index.get(guard.field.step);
    if (source !== undefined && source >= guarded)
      invalid(`guard on '${guard.step}' must read a step that runs before it`, [...at, "field"], {
        step_id: guard.step,
      });
  });
}

function checkResultFrom(doc: GraphDoc, base: KeyPath, index: Map<string, number>): void {
  const seenKeys = new Map<string, string>();
  doc.result_from.forEach((id, i) => {
    const at: KeyPath = [...base, "result_from", i];
    if (!index.has(id)) invalid(`result_from names unknown step '${id}'`, at, { step_id: id });
    if (doc.result_from.indexOf(id) !== i)
      invalid(`result_from lists '${id}' twice`, at, { step_id: id });
  });
  // Conditional producers (`when`) are usually mutually exclusive branches; their keys are
  // checked when they succeed. Two unconditional producers of one key always collide.
  for (const id of doc.result_from) {
    const step = doc.steps[index.get(id) ?? -1];
    if (step === undefined || step.when !== undefined) continue;
    for (const key of stepOutputContract(step) ?? []) {
      const other = seenKeys.get(key);
      if (other !== undefined)
        invalid(
          `result producers '${other}' and '${id}' both declare output '${key}'`,
          [...base, "steps", step.index, "outputs", key],
          { step_id: id, key },
        );
      seenKeys.set(key, id);
    }
  }
}

/** Validates cross-step rules and fills `depends_on` and fanout branch lists (in place). */
export function checkGraph(doc: GraphDoc, base: KeyPath): void {
  const index = new Map<string, number>();
  for (const step of doc.steps) {
    if (index.has(step.id))
      invalid(`duplicate step id '${step.id}'`, [...base, "steps", step.index, "id"], {
        step_id: step.id,
      });
    index.set(step.id, step.index);
  }
  for (const step of doc.steps) checkEdges(doc, step, [...base, "steps", step.index], index);
  checkGroups(doc, base);
  checkGuards(doc, base, index);
  checkResultFrom(doc, base, index);
}
