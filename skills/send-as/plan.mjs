// The provider-neutral send plan (runx.send_as.plan.v1 fields): what the send binds and what
// blocks it. Pure and deterministic: no clock, no network, no randomness.
const CHANNELS = new Set(["email", "sms", "chat", "push", "webhook", "other"]);
const AUDIENCES = new Set(["recipient", "list", "segment", "thread", "channel", "all_contacts"]);

const text = (value) => (typeof value === "string" ? value.trim() : "");

export default function plan({
  principal,
  channel,
  audience,
  consent_basis,
  content_digest,
  skip_approval,
}) {
  const blockers = [];
  const block = (code, message) => blockers.push({ code, message });
  if (skip_approval === true) {
    block("gate_bypass_requested", "a live customer send cannot skip its human approval");
  }
  if (text(principal) === "")
    block("principal_missing", "the principal the message is sent as is empty");
  if (!CHANNELS.has(channel))
    block(
      "channel_unknown",
      `channel ${JSON.stringify(channel)} is not one of ${[...CHANNELS].join(", ")}`,
    );
  const shape =
    audience !== null && typeof audience === "object" && !Array.isArray(audience) ? audience : {};
  if (!AUDIENCES.has(shape.type) || text(shape.ref) === "") {
    block(
      "audience_unnamed",
      "the audience must name its type and ref; there is no implicit broad default",
    );
  } else if (shape.type === "all_contacts" && shape.reconfirmed !== true) {
    block("audience_broad", "an all-contacts send needs audience.reconfirmed: true");
  }
  if (text(consent_basis) === "") block("consent_missing", "no consent basis for this audience");
  const decision = blockers.length === 0 ? "ready" : "refused";
  return {
    send_plan: {
      decision,
      action_family: "send-as",
      gate_bypass_requested: skip_approval === true,
      principal: { ref: text(principal) },
      provider: { name: "outbox", runtime_path: "provider.mutate message.send" },
      channel,
      audience: {
        type: shape.type ?? null,
        ref: text(shape.ref),
        requires_reconfirmation: shape.type === "all_contacts",
      },
      content: { digest: content_digest },
      consent_basis: text(consent_basis),
      gates: { preflight_required: true, human_approval_required: true },
      blockers,
    },
  };
}
