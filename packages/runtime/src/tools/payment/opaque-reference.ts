/**
 * The payment tools' test for a caller-supplied reference (payee, refund reason, settlement
 * family): it must be an opaque handle, never secret material pasted in its place. Pure.
 */

/** An opaque, non-secret reference: no whitespace, not token- or key-shaped. */
export function opaqueReference(value: string): boolean {
  const lower = value.toLowerCase();
  return (
    value !== "" &&
    value.length <= 512 &&
    !/\s/.test(value) &&
    !["sk-", "sk_", "rk_", "bearer", "-----begin"].some((p) => lower.startsWith(p))
  );
}
