// Deterministic simulated payment. No clock, no randomness, no network: the payment id is
// an FNV-1a hash of the request, so the same request always yields the same result.
function fnv1a(text) {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}

export default function simulate({ amount_minor, currency, payee, idempotency_key }) {
  if (!Number.isInteger(amount_minor) || amount_minor <= 0) {
    throw new Error("amount_minor must be a positive integer");
  }
  if (!/^[A-Z]{3}$/.test(currency)) throw new Error("currency must be a 3-letter ISO code");
  const request = JSON.stringify([amount_minor, currency, payee, idempotency_key]);
  return {
    payment_id: `mockpay_${fnv1a(request)}${fnv1a(request.split("").reverse().join(""))}`,
    status: "simulated",
    money_moved: false,
    amount: { units: amount_minor, unit: currency },
    payee,
  };
}
