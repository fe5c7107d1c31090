/**
 * The bundled payment skills replay their own harness fixtures through the built CLI: the
 * success path and every refusal each skill documents.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HarnessReport } from "../../harness/index.js";
import { makeWorkspace, runx, type Workspace } from "../../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-payment-skills-");
});
afterEach(() => ws.cleanup());

const CASES: Record<string, string[]> = {
  charge: [
    "charges-once-after-approval",
    "declined-records-nothing",
    "refuses-credential-of-another-family",
    "refuses-expired-price",
    "refuses-raw-credential",
  ],
  refund: [
    "declined-refunds-nothing",
    "refunds-remainder-once-after-approval",
    "refunds-rest-after-own-refund",
    "refuses-another-payer",
    "refuses-currency-mismatch",
    "refuses-duplicate-idempotency-seed",
    "refuses-over-refundable-remainder",
    "refuses-over-remaining-after-own-refund",
    "refuses-own-refund-seed-twice",
    "refuses-refund-receipt-as-charge",
    "refuses-unknown-charge-receipt",
  ],
  spend: [
    "declined-moves-no-money",
    "pays-once-after-approval",
    "refuses-ambiguous-bounds",
    "refuses-ambiguous-challenge",
    "refuses-amount-over-cap",
    "refuses-child-broader-than-parent",
    "refuses-malformed-challenge",
    "refuses-quote-drift",
    "refuses-rail-without-proof",
  ],
};

describe("bundled payment skills", () => {
  it.each(Object.entries(CASES))(
    "%s passes every harness fixture",
    async (skill, cases) => {
      ws.addBundledSkill(skill);
      const result = await runx(ws, ["harness", `skills/${skill}`, "--json"]);
      const report = result.json<HarnessReport>();
      expect(report.assertion_errors).toEqual([]);
      expect(report.status).toBe("passed");
      expect([...report.case_names].sort()).toEqual([...cases].sort());
      expect(result.code).toBe(0);
    },
    60_000,
  );
});
