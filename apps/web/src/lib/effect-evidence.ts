/**
 * The provider evidence lines an approval card still needs to show after the payload above
 * them: a line whose value the payload already shows (the payee as the target, the same
 * operation or idempotency key) or the amount, which heads the card, is named once in a
 * "shown above" note instead of repeated. Every line stays accounted for. Pure.
 */
export interface EvidenceLine {
  path: string;
  label: string;
  value: string;
}

export function evidenceToShow(
  evidence: readonly EvidenceLine[],
  payload: readonly { value: string }[],
  amountShown: boolean,
): { lines: EvidenceLine[]; shownAbove: EvidenceLine[] } {
  const above = new Set(payload.map((field) => field.value));
  const lines: EvidenceLine[] = [];
  const shownAbove: EvidenceLine[] = [];
  for (const line of evidence) {
    const repeated = (line.path === "amount" && amountShown) || above.has(line.value);
    (repeated ? shownAbove : lines).push(line);
  }
  return { lines, shownAbove };
}
