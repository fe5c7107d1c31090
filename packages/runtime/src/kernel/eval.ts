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

/** Upstream's bounds on an evaluated document, checked before any field is read. */
const LIMITS = {
  depth: 64,
  nodes: 20_000,
  items: 4_096,
  fields: 512,
  keyBytes: 1024,
  stringBytes: 64 * 1024,
};

function bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** Fails a document over upstream's depth, size or width bounds. */
function checkShape(document: JsonValue): void {
  let nodes = 0;
  const pending: [JsonValue, number][] = [[document, 1]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop() as [JsonValue, number];
    nodes += 1;
    if (nodes > LIMITS.nodes)
      evaluationFailed("", `kernel eval input exceeds ${LIMITS.nodes} JSON nodes`);
    if (depth > LIMITS.depth)
      evaluationFailed("", `kernel eval input exceeds JSON depth ${LIMITS.depth}`);
    if (Array.isArray(value)) {
      if (value.length > LIMITS.items)
        evaluationFailed("", `kernel eval input array exceeds ${LIMITS.items} items`);
      for (const child of value) pending.push([child, depth + 1]);
    } else if (typeof value === "object" && value !== null) {
      const entries = Object.entries(value);
      if (entries.length > LIMITS.fields)
        evaluationFailed("", `kernel eval input object exceeds ${LIMITS.fields} fields`);
      for (const [key, child] of entries) {
        if (bytes(key) > LIMITS.keyBytes)
          evaluationFailed("", `kernel eval input object key exceeds ${LIMITS.keyBytes} bytes`);
        pending.push([child, depth + 1]);
      }
    } else if (typeof value === "string" && bytes(value) > LIMITS.stringBytes) {
      evaluationFailed("", `kernel eval input string exceeds ${LIMITS.stringBytes} bytes`);
    }
  }
}

/** Every `input.kind` the evaluator knows. */
export const KERNEL_KINDS: readonly string[] = Object.keys(KINDS).sort();

/** Evaluates the document's decision; throws KERNEL_EVALUATION_FAILED naming the bad field. */
export function evaluateKernel(document: JsonValue): JsonValue {
  checkShape(document);
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
      `unsupported kernel input kind '${kind}'`,
    );
  return evaluate(input);
}
