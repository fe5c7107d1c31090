/**
 * Field tables for references and the authority block (terms, bounds, attenuation,
 * enforcement), in upstream declaration order. See `decode.ts` for the presence rules.
 */
import { arr, bool, dateTime, obj, oneOf, shape, snake, text, uint } from "./decode.js";

/** Values of `proof_kind`. */
export const PROOF_KINDS = ["effect_evidence", "effect_finality", "credential_resolution"];

/** Reference: `{type, uri, provider?, locator?, label?, observed_at?, proof_kind?}`. */
export const reference = shape("Reference", [
  ["type", snake, "required"],
  ["uri", text, "required"],
  ["provider", text, "optional"],
  ["locator", text, "optional"],
  ["label", text, "optional"],
  ["observed_at", dateTime, "optional"],
  ["proof_kind", oneOf(...PROOF_KINDS), "optional"],
]);
/** A single reference. */
export const ref = obj(() => reference);
/** A list of references. */
export const refs = arr(ref);

const effectLimit = shape("AuthorityEffectLimit", [
  ["family", text, "required"],
  ["unit", text, "required"],
  ["max_per_call_units", uint, "optional"],
  ["max_per_run_units", uint, "optional"],
  ["max_per_period_units", uint, "optional"],
  ["period", text, "optional"],
  ["channels", arr(text), "required"],
  ["realm", text, "optional"],
  ["peer", text, "optional"],
  ["operation", text, "optional"],
  ["preflight_ttl_ms", uint, "optional"],
  ["approval_threshold_units", uint, "optional"],
  ["authorization_form", oneOf("single_use_capability", "external_signer"), "optional"],
  ["preflight_required", bool, "skip-false"],
  ["commitment_required", bool, "skip-false"],
  ["idempotency_required", bool, "skip-false"],
  ["recovery_required", bool, "skip-false"],
  ["receipt_before_success", bool, "skip-false"],
  ["single_use_capability", bool, "skip-false"],
]);
const bounds = shape("AuthorityBounds", [
  ["repo_path_globs", arr(text), "list-skip-empty"],
  ["branch_patterns", arr(text), "list-skip-empty"],
  ["filesystem_roots", arr(text), "list-skip-empty"],
  ["network_destinations", arr(text), "list-skip-empty"],
  ["deployment_environments", arr(text), "list-skip-empty"],
  ["token_audiences", arr(text), "list-skip-empty"],
  ["max_cost_units", { t: "num" }, "optional"],
  ["effect_limits", arr(obj(() => effectLimit)), "list-skip-empty"],
  [
    "effects",
    arr(
      obj(() =>
        shape("AuthorityEffectGuard", [
          ["family", text, "required"],
          ["guard_kinds", arr(oneOf("receipt_before_success", "non_replay")), "list-skip-empty"],
          ["proof_kinds", arr(oneOf(...PROOF_KINDS)), "list-skip-empty"],
        ]),
      ),
    ),
    "list-skip-empty",
  ],
  ["max_runtime_ms", uint, "optional"],
  ["max_fanout", uint, "optional"],
  ["max_child_depth", uint, "optional"],
]);
const term = shape("AuthorityTerm", [
  ["term_id", text, "required"],
  ["principal_ref", ref, "required"],
  ["resource_ref", ref, "required"],
  ["resource_family", snake, "required"],
  ["verbs", arr(snake), "required"],
  ["bounds", obj(() => bounds), "required"],
  [
    "conditions",
    arr(
      obj(() =>
        shape("AuthorityCondition", [
          ["condition_id", text, "required"],
          ["predicate", snake, "required"],
          ["refs", refs, "list-skip-empty"],
          ["parameters", { t: "json-object" }, "optional"],
        ]),
      ),
    ),
    "list",
  ],
  [
    "approvals",
    arr(
      obj(() =>
        shape("AuthorityApproval", [
          ["approval_ref", ref, "required"],
          ["approved_by_ref", ref, "optional"],
          ["approved_at", dateTime, "optional"],
          ["criterion_ids", arr(text), "list-skip-empty"],
        ]),
      ),
    ),
    "list",
  ],
  ["capabilities", arr(snake), "list"],
  ["expires_at", dateTime, "optional"],
  ["issued_by_ref", ref, "required"],
  ["credential_ref", ref, "optional"],
]);
const subsetProof = shape("AuthoritySubsetProof", [
  ["parent_authority_ref", ref, "required"],
  ["comparison_algorithm", text, "required"],
  ["result", oneOf("subset"), "required"],
  [
    "compared_terms",
    arr(
      obj(() =>
        shape("AuthoritySubsetComparison", [
          ["child_term_id", text, "required"],
          ["parent_term_id", text, "required"],
          ["relation", oneOf("equal", "subset"), "required"],
        ]),
      ),
    ),
    "required",
  ],
  ["proof_ref", ref, "optional"],
  ["checked_at", dateTime, "required"],
]);
/** The receipt `authority` block. */
export const authority = shape("Authority", [
  ["actor_ref", ref, "required"],
  ["grant_refs", refs, "list"],
  ["scope_refs", refs, "list"],
  ["authority_proof_refs", refs, "list"],
  [
    "attenuation",
    obj(() =>
      shape("Attenuation", [
        ["parent_authority_ref", ref, "nullable"],
        ["subset_proof", obj(() => subsetProof), "nullable"],
      ]),
    ),
    "required",
  ],
  ["mandate_ref", ref, "optional"],
  ["terms", arr(obj(() => term)), "list"],
  [
    "enforcement",
    obj(() =>
      shape("Enforcement", [
        ["profile_hash", text, "required"],
        [
          "execution_boundary",
          obj(() =>
            shape("ExecutionBoundary", [
              [
                "kind",
                oneOf(
                  "trusted_host_process",
                  "deterministic_worker",
                  "native_capability",
                  "remote_provider",
                ),
                "required",
              ],
            ]),
          ),
          "optional",
        ],
        ["redaction_refs", refs, "list"],
        ["setup_refs", refs, "list"],
        ["teardown_refs", refs, "list"],
      ]),
    ),
    "required",
  ],
]);
