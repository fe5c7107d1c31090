// The send result (runx.send_as.result.v1 fields): `sent` only when the mutation and the
// independent readback agree on provider, channel, content digest and message identity.
const text = (value) => (typeof value === "string" ? value : "");

export default function verify({ plan, apply, readback }) {
  const applied = apply?.result ?? {};
  const observed = readback?.result ?? {};
  const errors = [];
  if (text(apply?.status) !== "success") errors.push("the provider mutation did not succeed");
  if (text(readback?.status) !== "success" || observed.found !== true)
    errors.push("the readback did not find the message");
  if (text(apply?.provider) !== text(readback?.provider))
    errors.push("provider changed between send and readback");
  if (text(apply?.target) !== text(readback?.target))
    errors.push("channel changed between send and readback");
  if (text(applied.content_digest) !== text(plan?.content?.digest))
    errors.push("sent content is not the planned content");
  if (text(observed.content_digest) !== text(plan?.content?.digest))
    errors.push("stored content is not the planned content");
  if (text(applied.message_id) === "" || text(observed.message_id) !== text(applied.message_id))
    errors.push("readback observed another message");
  if (text(observed.idempotency_key) !== text(applied.idempotency_key))
    errors.push("readback did not observe the send's idempotency binding");
  const complete = errors.length === 0;
  return {
    send_result: {
      schema: "runx.send_as.result.v1",
      status: complete ? "sent" : "failed",
      outcome: complete ? "completed" : "failed",
      provider: text(apply?.provider),
      target: text(apply?.target),
      operation: text(apply?.operation),
      content_digest: text(plan?.content?.digest),
      operation_id: text(apply?.operation_id),
      readback_ref: text(observed.readback_ref),
      idempotency_key: text(apply?.idempotency_key),
      evidence: {
        mutation_readback_ref: text(applied.readback_ref),
        verification_readback_ref: text(observed.readback_ref),
      },
      errors,
    },
  };
}
