/**
 * The receipt's field tables: every struct's members in upstream declaration order
 * (derived from upstream-written production receipts and the contract sources) and how
 * each behaves when empty. `decodeReceipt` walks them with the engine in `decode.ts`.
 */
import {
  anyText,
  arr,
  bool,
  dateTime,
  decodeFree,
  decodeShape,
  obj,
  oneOf,
  shapeError,
  shape,
  text,
  uint,
} from "./decode.js";
import { authority, ref, refs } from "./shape-authority.js";
import type { JsonObject, Receipt } from "./model.js";

const DISPOSITIONS = [
  "closed",
  "deferred",
  "superseded",
  "declined",
  "blocked",
  "failed",
  "killed",
  "timed_out",
];
const VERIFICATION_STATUSES = ["passed", "failed", "pending", "not_applicable", "missing"];
const closure = shape("Closure", [
  ["disposition", oneOf(...DISPOSITIONS), "required"],
  ["reason_code", text, "required"],
  ["summary", text, "required"],
  ["closed_at", dateTime, "required"],
]);
const successCriterion = shape("SuccessCriterion", [
  ["criterion_id", text, "required"],
  ["statement", text, "required"],
  ["required", bool, "required"],
]);
const intent = shape("Intent", [
  ["purpose", text, "required"],
  ["legitimacy", text, "required"],
  ["success_criteria", arr(obj(() => successCriterion)), "list"],
  ["constraints", arr(text), "list"],
  ["derived_from", refs, "list"],
]);
const criterionBinding = shape("CriterionBinding", [
  ["criterion_id", text, "required"],
  ["status", oneOf("verified", "failed", "pending", "not_applicable", "unknown"), "required"],
  ["evidence_refs", refs, "list"],
  ["verification_refs", refs, "list"],
  ["summary", text, "optional"],
]);
const decision = shape("Decision", [
  ["decision_id", text, "required"],
  [
    "choice",
    oneOf("open", "continue", "spawn_child", "escalate", "defer", "close", "decline", "monitor"),
    "required",
  ],
  [
    "inputs",
    obj(() =>
      shape("DecisionInputs", [
        ["signal_refs", refs, "list"],
        ["target_ref", ref, "nullable"],
        ["opportunity_refs", refs, "list"],
        ["selection_ref", ref, "nullable"],
      ]),
    ),
    "required",
  ],
  ["proposed_intent", obj(() => intent), "required"],
  ["selected_act_id", text, "nullable"],
  ["selected_harness_ref", ref, "nullable"],
  [
    "justification",
    obj(() =>
      shape("DecisionJustification", [
        ["summary", text, "required"],
        ["evidence_refs", refs, "list"],
      ]),
    ),
    "required",
  ],
  ["closure", obj(() => closure), "nullable"],
  ["artifact_refs", refs, "list"],
]);

const targetSurface = shape("TargetSurface", [
  ["surface_ref", ref, "required"],
  ["mutating", bool, "required"],
  ["rationale", text, "optional"],
]);
const verificationCheck = shape("VerificationCheck", [
  ["check_id", anyText, "required"],
  ["criterion_ids", arr(anyText), "required"],
  ["status", oneOf(...VERIFICATION_STATUSES), "required"],
  ["summary", anyText, "optional"],
  ["checked_refs", refs, "list"],
  ["evidence_refs", refs, "list"],
  ["verified_at", anyText, "optional"],
]);
const verification = shape("Verification", [
  ["schema", anyText, "optional"],
  ["verification_id", anyText, "optional"],
  ["status", oneOf(...VERIFICATION_STATUSES), "required"],
  ["checks", arr(obj(() => verificationCheck)), "list"],
  ["verified_at", anyText, "optional"],
  ["evidence_refs", refs, "list"],
]);
const revisionDetails = shape("RevisionDetails", [
  [
    "change_request",
    obj(() =>
      shape("ChangeRequest", [
        ["request_id", text, "required"],
        ["summary", text, "required"],
        ["target_surfaces", arr(obj(() => targetSurface)), "list"],
        ["success_criteria", arr(obj(() => successCriterion)), "list"],
      ]),
    ),
    "required",
  ],
  [
    "change_plan",
    obj(() =>
      shape("ChangePlan", [
        ["plan_id", text, "required"],
        ["summary", text, "required"],
        ["steps", arr(text), "list"],
        ["risks", arr(text), "list"],
      ]),
    ),
    "required",
  ],
  ["target_surfaces", arr(obj(() => targetSurface)), "list"],
  ["invariants", arr(text), "list"],
  ["verification", obj(() => verification), "optional"],
  ["handoff_refs", refs, "list"],
  ["revision_refs", refs, "list"],
]);
const verificationDetails = shape("VerificationDetails", [
  ["criterion_ids", arr(text), "required"],
  ["verification", obj(() => verification), "required"],
  ["deployment_ref", ref, "optional"],
]);
const act = shape("Act", [
  ["id", text, "required"],
  ["form", oneOf("revision", "reply", "review", "observation", "verification"), "required"],
  ["intent", obj(() => intent), "required"],
  ["summary", text, "required"],
  ["criterion_bindings", arr(obj(() => criterionBinding)), "list"],
  [
    "by",
    obj(() =>
      shape("RunnerProvenance", [
        ["provider", anyText, "nullable"],
        ["model", anyText, "nullable"],
        ["prompt_version", anyText, "nullable"],
      ]),
    ),
    "optional",
  ],
  ["source_refs", refs, "list"],
  ["target_refs", refs, "list"],
  ["artifact_refs", refs, "list"],
  ["context_ref", ref, "optional"],
  ["closure", obj(() => closure), "required"],
  ["revision", obj(() => revisionDetails), "optional"],
  ["verification", obj(() => verificationDetails), "optional"],
]);

const subject = shape("Subject", [
  ["kind", text, "required"],
  ["ref", ref, "required"],
  [
    "input_context",
    obj(() =>
      shape("InputContext", [
        ["source", text, "required"],
        ["preview", anyText, "required"],
        ["value_hash", text, "required"],
      ]),
    ),
    "optional",
  ],
  [
    "commitments",
    arr(
      obj(() =>
        shape("Commitment", [
          ["scope", oneOf("input", "output", "stdout", "stderr", "error"), "required"],
          ["algorithm", oneOf("sha256"), "required"],
          ["value", text, "required"],
          ["canonicalization", text, "required"],
        ]),
      ),
    ),
    "list",
  ],
]);

const seal = shape("Seal", [
  ["disposition", oneOf(...DISPOSITIONS), "required"],
  ["reason_code", text, "required"],
  ["summary", text, "required"],
  ["closed_at", dateTime, "required"],
  ["last_observed_at", dateTime, "required"],
  ["criteria", arr(obj(() => criterionBinding)), "list"],
]);
const syncPoint = shape("SyncPoint", [
  ["group_id", text, "required"],
  ["strategy", oneOf("all", "any", "quorum"), "required"],
  ["decision", oneOf("proceed", "halt", "pause", "escalate"), "required"],
  ["rule_fired", text, "required"],
  ["reason", text, "required"],
  ["branch_count", uint, "required"],
  ["success_count", uint, "required"],
  ["failure_count", uint, "required"],
  ["required_successes", uint, "required"],
  ["branch_receipts", arr(text), "list"],
  ["gate", { t: "json-object" }, "optional"],
]);
const lineage = shape("Lineage", [
  ["parent", ref, "optional"],
  ["previous", ref, "optional"],
  ["children", refs, "list"],
  ["sync", arr(obj(() => syncPoint)), "list"],
  ["resume_ref", ref, "optional"],
]);

const receipt = shape("Receipt", [
  ["schema", oneOf("runx.receipt.v1"), "required"],
  ["id", text, "required"],
  ["created_at", dateTime, "required"],
  ["canonicalization", text, "required"],
  [
    "issuer",
    obj(() =>
      shape("Issuer", [
        ["type", oneOf("local", "hosted", "ci", "verifier"), "required"],
        ["kid", text, "required"],
        ["public_key_sha256", text, "required"],
      ]),
    ),
    "required",
  ],
  [
    "signature",
    obj(() =>
      shape("Signature", [
        ["alg", oneOf("Ed25519"), "required"],
        ["value", text, "required"],
      ]),
    ),
    "required",
  ],
  ["digest", text, "required"],
  [
    "idempotency",
    obj(() =>
      shape("Idempotency", [
        ["intent_key", text, "required"],
        ["trigger_fingerprint", text, "required"],
        ["content_hash", text, "required"],
      ]),
    ),
    "required",
  ],
  ["subject", obj(() => subject), "required"],
  ["authority", obj(() => authority), "required"],
  ["signals", refs, "list"],
  ["decisions", arr(obj(() => decision)), "list"],
  ["acts", arr(obj(() => act)), "list"],
  ["seal", obj(() => seal), "required"],
  ["lineage", obj(() => lineage), "optional"],
  ["metadata", { t: "json-object" }, "optional"],
]);

/**
 * Strictly decodes a `runx.receipt.v1` value into the normalised model: members in
 * stored-file order, defaults filled, empty optionals dropped. Throws RECEIPT_INVALID.
 */
export function decodeReceipt(value: unknown): Receipt {
  return decodeShape(receipt, value, "$") as unknown as Receipt;
}

/** Decodes a free-form JSON object the way receipt metadata is stored (sorted members). */
export function decodeJsonObject(value: unknown, path = "$"): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw shapeError(path, "expected an object");
  }
  return decodeFree(value, path) as JsonObject;
}

/** The stored file form: compact JSON in upstream struct field order (no trailing newline). */
export function serializeReceipt(receipt: Receipt): string {
  return JSON.stringify(decodeReceipt(receipt));
}
