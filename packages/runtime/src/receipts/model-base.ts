/**
 * The base types of the receipt model that both `model.ts` and `model-authority.ts` use;
 * kept apart so the two model files do not import each other.
 */

/** A JSON value as read from a document. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;
/** A JSON object with unconstrained members (written with sorted keys). */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Which side of an effect a reference proves. */
export type ProofKind = "effect_evidence" | "effect_finality" | "credential_resolution";

/** A typed pointer to a receipt, act, artifact, principal or external object. */
export interface Reference {
  /** Snake_case kind: `receipt`, `artifact`, `harness`, `principal`, `grant`, ... */
  type: string;
  uri: string;
  provider?: string;
  locator?: string;
  label?: string;
  observed_at?: string;
  proof_kind?: ProofKind;
}
