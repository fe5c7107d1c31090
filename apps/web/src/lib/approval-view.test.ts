import { describe, expect, it } from "vitest";
import {
  decisionResult,
  needsAnotherApprover,
  outcomeWord,
  policyText,
  whoAsked,
} from "./approval-view";

const POLICY = { requiredApprovals: 1, forbidInitiator: true };

describe("the approval card's words", () => {
  it("says who started the run, or that it came from outside the console", () => {
    expect(whoAsked("ada")).toBe("Started by ada in the console");
    expect(whoAsked(null)).toMatch(/outside the console \(the CLI/);
  });

  it("states the policy with the approvals so far", () => {
    expect(policyText(POLICY, 0)).toBe(
      "Needs 1 approval from an approver; the operator who started the run may not approve. 0 of 1 so far.",
    );
    expect(policyText({ requiredApprovals: 2, forbidInitiator: false }, 1)).toBe(
      "Needs 2 approvals from distinct approvers. 1 of 2 so far.",
    );
  });

  it("knows when nobody else can approve, and not after a denial", () => {
    const gate = { policy: POLICY, approversAvailable: 0, decisions: [] };
    expect(needsAnotherApprover(gate)).toBe(true);
    expect(needsAnotherApprover({ ...gate, approversAvailable: 1 })).toBe(false);
    expect(
      needsAnotherApprover({
        policy: { requiredApprovals: 2, forbidInitiator: true },
        approversAvailable: 1,
        decisions: [{ decision: "approve" }],
      }),
    ).toBe(false);
    expect(needsAnotherApprover({ ...gate, decisions: [{ decision: "deny" }] })).toBe(false);
  });
});

describe("what a decision did", () => {
  const base = { approvals: 1, required: 1, releasable: true };
  it("names the sealed outcome of a released run", () => {
    expect(
      decisionResult({
        ...base,
        decision: "approve",
        run: { state: "settled", status: "sealed", disposition: "closed" },
      }),
    ).toBe("Approved (1 of 1). The run resumed and sealed: completed.");
    expect(
      decisionResult({
        ...base,
        decision: "deny",
        run: { state: "settled", status: "sealed", disposition: "declined" },
      }),
    ).toBe("Denied. The run resumed and sealed: declined.");
  });

  it("says when more approvals are needed or the run is still running", () => {
    expect(
      decisionResult({
        decision: "approve",
        approvals: 1,
        required: 2,
        releasable: false,
        run: null,
      }),
    ).toBe("Approval recorded (1 of 2); waiting for more approvers.");
    expect(decisionResult({ ...base, decision: "approve", run: { state: "running" } })).toBe(
      "Approved (1 of 1). The run resumed and is still running.",
    );
    expect(outcomeWord("killed")).toBe("cancelled");
  });
});
