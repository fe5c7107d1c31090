/**
 * What an approval releases, in plain words: the preview the approval card shows of one
 * pending gate. Pure: builders over the gate's own request and the data recovered from the
 * paused run (console/gate-preview.ts recovers it); nothing here reads package text.
 *
 * A provider effect's payload is checked before it is shown: its digest must be the gate's
 * `payload_digest`, and the plan rebuilt from the recovered tool input with the same function
 * `provider.mutate` uses must carry the gate's plan digest. Anything else is no preview, with
 * the reason, and an approval is refused (approvals.ts).
 */
import { REDACTION_MARKER } from "../redaction.js";
import { hashCanonical } from "../receipts/index.js";
import type { JsonRecord } from "../tools/types.js";
import {
  SECRET_FIELD_NAMES,
  mutationPlan,
  payloadOf,
  providerGateId,
} from "../tools/provider/provider.js";
import { formatAmount, providerEffectFacts } from "./effect-facts.js";
import type { EffectFacts, PreviewAmount, PreviewField } from "./effect-facts.js";

export { formatAmount } from "./effect-facts.js";
export type { PreviewAmount, PreviewField } from "./effect-facts.js";

/** What a gate releases, as the approval card shows it. */
export interface EffectPreview {
  kind: "provider_effect" | "approval_step" | "fanout_gate" | "adapter_dispatch";
  /** The effect in a few words, for the confirmation ("record.create of $12.50 to payouts"). */
  headline: string;
  /** What approving does, as a sentence. */
  onApprove: string;
  /** What denying does, as a sentence. */
  onDeny: string;
  /** The payload's (or the bound inputs') fields, every one, in full; secrets redacted. */
  fields: PreviewField[];
  amount: PreviewAmount | null;
  /**
   * A provider effect's evidence (provider, operation, target, amount, idempotency key, plan
   * digest, releasing approval), built by the same function `runx history --detail` uses.
   */
  effect: EffectFacts | null;
  /** How the preview was checked against what the gate binds. */
  verified: string;
}

/** A preview, or why there is none. */
export type PreviewResult =
  { preview: EffectPreview; unavailable: null } | { preview: null; unavailable: string };

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** No preview, for `reason`. */
export function unavailable(reason: string): PreviewResult {
  return { preview: null, unavailable: reason };
}

const ok = (preview: EffectPreview): PreviewResult => ({ preview, unavailable: null });

/** A key in words: `recipient_account` → "Recipient account", `dueDate` → "Due date". */
export function fieldLabel(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_\-.]+/g, " ")
    .trim()
    .toLowerCase();
  return words === "" ? key : words[0]!.toUpperCase() + words.slice(1);
}

function scalarText(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return value === "" ? '"" (empty text)' : value;
  return typeof value === "number" || typeof value === "boolean" ? String(value) : "—";
}

/**
 * Every leaf of a JSON value as a field, in document order, values in full. A key that names
 * a credential (the provider boundary's secret field names) shows `[redacted-credential]`
 * whatever it holds; values the run redacted when it stored them stay redacted.
 */
export function previewFields(value: unknown, path = "", label = ""): PreviewField[] {
  const at = (p: string, l: string, v: string): PreviewField => ({ path: p, label: l, value: v });
  if (Array.isArray(value)) {
    if (value.length === 0) return [at(path, label, "(empty list)")];
    return value.flatMap((item, index) =>
      previewFields(item, `${path}[${index}]`, `${label} ${index + 1}`.trim()),
    );
  }
  if (isRecord(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0) return path === "" ? [] : [at(path, label, "(empty)")];
    return entries.flatMap(([key, item]) => {
      const p = path === "" ? key : `${path}.${key}`;
      const l = label === "" ? fieldLabel(key) : `${label} › ${fieldLabel(key)}`;
      return SECRET_FIELD_NAMES.has(key.toLowerCase())
        ? [at(p, l, REDACTION_MARKER)]
        : previewFields(item, p, l);
    });
  }
  return [at(path, label, scalarText(value))];
}

function amountOf(value: unknown): PreviewAmount | null {
  if (!isRecord(value) || typeof value.units !== "number" || typeof value.unit !== "string") {
    return null;
  }
  return { units: value.units, unit: value.unit, text: formatAmount(value.units, value.unit) };
}

/**
 * The preview of a `provider.mutate` gate from the tool input its step resolves to now
 * (recovered from the paused run's state). Returns no preview unless the payload's digest is
 * the gate's `payload_digest` and the plan rebuilt from the input names the gate.
 */
export function providerPreview(gate: { id: string; summary?: unknown }, input: JsonRecord) {
  const summary = isRecord(gate.summary) ? gate.summary : {};
  const provider = str(summary.provider);
  const scopes = Array.isArray(summary.scopes) ? summary.scopes.map(String) : null;
  const bound = str(summary.payload_digest);
  if (provider === null || scopes === null || bound === null) {
    return unavailable("the gate's summary does not name a provider, scopes and payload digest");
  }
  const payload = payloadOf(input);
  const payloadDigest = hashCanonical(payload);
  if (payloadDigest !== bound) {
    return unavailable(
      `the payload recovered from the paused run has digest ${payloadDigest}, not the gate's ${bound}`,
    );
  }
  const grantRef = str(summary.grant_ref);
  const principalRef = str(summary.principal_ref);
  if (grantRef === null || principalRef === null || !grantRef.startsWith("runx:grant:")) {
    return unavailable("the gate's summary does not name the grant and principal it runs under");
  }
  const plan = mutationPlan(input, {
    provider,
    scopes,
    payloadDigest,
    authority: { grant_id: grantRef.slice("runx:grant:".length), principal_ref: principalRef },
  });
  if (providerGateId(plan.digest) !== gate.id || plan.digest !== summary.plan_digest) {
    return unavailable(
      `the plan recovered from the paused run (${plan.digest}) is not the plan the gate binds`,
    );
  }
  const operation = typeof input.operation === "string" ? input.operation : "";
  const target = typeof input.target === "string" ? input.target : "";
  const amount = plan.amount !== undefined ? amountOf(plan.amount) : null;
  return ok({
    kind: "provider_effect",
    headline:
      amount !== null
        ? `${operation} of ${amount.text} to ${target}`
        : `${operation} on ${target} at ${provider}`,
    onApprove: `runx performs ${operation} on ${target} at ${provider} with this payload${amount !== null ? `, for ${amount.text}` : ""}, once (the step's idempotency key makes a replay return the recorded outcome).`,
    onDeny: `The run seals declined; nothing is sent to ${provider}.`,
    fields: previewFields(payload),
    amount,
    effect: providerEffectFacts({
      provider,
      operation,
      target,
      amount: plan.amount ?? null,
      idempotency_key: typeof input.idempotency_key === "string" ? input.idempotency_key : null,
      plan_digest: plan.digest,
      approval: {
        state: "pending",
        gate_id: gate.id,
        gate_type: typeof plan.approval?.type === "string" ? plan.approval.type : null,
        actor: null,
      },
    }),
    verified: `payload digest ${payloadDigest} and plan digest ${plan.digest} match the gate`,
  });
}

/** Fields of an approval step's resolved inputs that are the gate itself, not what it binds. */
const GATE_INPUTS = new Set(["gate_id", "reason", "gate_type", "summary"]);

/**
 * The preview of a graph `approval` step: its declared summary and the other inputs it binds,
 * as the step resolves them now; `matches` says the step resolves to the very request the run
 * paused on (otherwise no preview).
 */
export function approvalStepPreview(options: {
  stepId: string;
  gate: { id: string; reason: string; type?: string; summary?: unknown };
  inputs: Record<string, unknown>;
  matches: boolean;
  /** The steps that run after this one when it is approved (document order). */
  next: readonly string[];
}): PreviewResult {
  if (!options.matches) {
    return unavailable(
      `step ${options.stepId} no longer resolves to the request the run paused on`,
    );
  }
  const bound = Object.fromEntries(
    Object.entries(options.inputs).filter(([key]) => !GATE_INPUTS.has(key)),
  );
  const summary = options.gate.summary;
  const fields = [
    ...(summary === undefined
      ? []
      : isRecord(summary) || Array.isArray(summary)
        ? previewFields(summary, "summary", "Summary")
        : [{ path: "summary", label: "Summary", value: scalarText(summary) }]),
    ...previewFields(bound),
  ];
  const later = options.next.length > 0 ? ` (${options.next.join(", ")})` : "";
  return ok({
    kind: "approval_step",
    headline: `the ${options.gate.type ?? "approval"} gate of step ${options.stepId}`,
    onApprove: `Step ${options.stepId} records the approval and the run continues with the steps after it${later}.`,
    onDeny: `The run seals declined; the steps after ${options.stepId}${later} never run.`,
    fields,
    amount: null,
    effect: null,
    verified: `step ${options.stepId}, resolved again from the paused run, asks for this exact gate`,
  });
}

/** The preview of a fanout group's gate from its recorded sync point. */
export function fanoutPreview(record: {
  group_id: string;
  rule_fired: string;
  reason: string;
  branch_count: number;
  success_count: number;
  failure_count: number;
  required_successes: number;
}): PreviewResult {
  return ok({
    kind: "fanout_gate",
    headline: `fanout group ${record.group_id} (${record.rule_fired})`,
    onApprove: `Fanout group ${record.group_id} proceeds despite ${record.rule_fired}, and the run continues after it.`,
    onDeny: `The run seals declined at fanout group ${record.group_id}.`,
    fields: [
      { path: "group_id", label: "Fanout group", value: record.group_id },
      { path: "rule_fired", label: "Rule fired", value: record.rule_fired },
      { path: "reason", label: "Why it paused", value: record.reason },
      {
        path: "branches",
        label: "Branches",
        value: `${record.success_count} of ${record.branch_count} succeeded, ${record.failure_count} failed; ${record.required_successes} required`,
      },
    ],
    amount: null,
    effect: null,
    verified: "the group's recorded sync point asks for this exact gate",
  });
}

/**
 * The preview of an adapter dispatch: the binding is the gate's own summary (packet, adapter
 * and authority digests); the packet is rebuilt and checked against it when the gate is
 * released (run/adapter-step.ts), so the card shows the binding itself.
 */
export function adapterPreview(gate: { summary?: unknown }): PreviewResult {
  const s = isRecord(gate.summary) ? gate.summary : {};
  const packet = str(s.packet_id);
  const adapter = str(s.adapter_id);
  const digest = str(s.packet_digest);
  if (packet === null || adapter === null || digest === null) {
    return unavailable("the gate's binding does not name a packet, its digest and an adapter");
  }
  const granted = Array.isArray(s.authority_granted) ? s.authority_granted.map(String) : [];
  return ok({
    kind: "adapter_dispatch",
    headline: `dispatch of packet ${packet} to adapter ${adapter}`,
    onApprove: `runx hands packet ${packet} to adapter ${adapter} with authority ${granted.length > 0 ? granted.join(", ") : "none"}.`,
    onDeny:
      "Nothing is launched: the dispatch is refused and the run seals without the adapter's work.",
    fields: [],
    amount: null,
    effect: null,
    verified: `the approval binds packet digest ${digest}; the packet is rebuilt and checked against it on release`,
  });
}
