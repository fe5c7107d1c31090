/**
 * `runx kernel eval`: evaluates one kernel decision document — an upstream kernel fixture
 * (`{$schema, name, input, expected}`) or a bare `input` object — through the runtime's policy
 * and graph modules. The `expected` block is never read.
 */
import type { JsonValue } from "../parser/json.js";
import { POLICY_KINDS } from "./policy.js";
import { Fields, evaluationFailed } from "./read.js";
import { STATE_MACHINE_KINDS } from "./state-machine.js";

const KINDS: Record<string, (input: Fields) => JsonValue> = {
  ...POLICY_KINDS,
  ...STATE_MACHINE_KINDS,
};

/** The canonical `$schema` refs a fixture may carry. */
const SCHEMA_REFS = new Set([
  "../schema/policy.schema.json",
  "../schema/state-machine.schema.json",
]);

/** Every `input.kind` the evaluator knows. */
export const KERNEL_KINDS: readonly string[] = Object.keys(KINDS).sort();

/** Evaluates the document's decision; throws KERNEL_EVALUATION_FAILED naming the bad field. */
export function evaluateKernel(document: JsonValue): JsonValue {
  const doc = Fields.of(document, "");
  const wrapped = doc.has("input");
  if (wrapped && doc.has("$schema")) {
    const ref = doc.string("$schema");
    if (!SCHEMA_REFS.has(ref))
      evaluationFailed("$schema", `unknown kernel fixture schema '${ref}'`);
  }
  const input = wrapped ? doc.object("input") : doc;
  const kind = input.string("kind");
  const evaluate = KINDS[kind];
  if (evaluate === undefined)
    return evaluationFailed(
      `${input.path === "" ? "" : "input."}kind`,
      `unknown kernel kind '${kind}'`,
    );
  return evaluate(input);
}
