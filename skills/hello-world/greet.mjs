// Deterministic: the same input always yields the same greeting.
export default function greet({ name, punctuation }) {
  const who = String(name).trim() || "world";
  return { message: `hello, ${who}${punctuation}`, length: who.length };
}
