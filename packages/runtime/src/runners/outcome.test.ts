import { describe, expect, it } from "vitest";
import { STEP_CLOSED, sealReasonCode } from "./outcome.js";

describe("seal reason codes", () => {
  it("close on a declared effect evidence packet as effect_evidence_closed", () => {
    const artifacts = { wrap_as: "effect_evidence_packet", packet: "runx.effect.evidence.v1" };
    expect(sealReasonCode("process_closed", artifacts)).toBe("effect_evidence_closed");
    expect(
      sealReasonCode("process_closed", { packets: { proof: "runx.effect.evidence.v1" } }),
    ).toBe("effect_evidence_closed");
    // A graph step closes on its evidence packet the same way.
    expect(sealReasonCode(STEP_CLOSED, artifacts)).toBe("effect_evidence_closed");
  });

  it("keep process_closed for other packets and every other reason as it is", () => {
    const triage = { wrap_as: "support_triage_packet", packet: "runx.support.triage_reply.v1" };
    expect(sealReasonCode("process_closed", triage)).toBe("process_closed");
    expect(sealReasonCode("process_closed", undefined)).toBe("process_closed");
    expect(sealReasonCode(STEP_CLOSED, triage)).toBe("step_closed");
    const evidence = { packet: "runx.effect.evidence.v1" };
    expect(sealReasonCode("process_failed", evidence)).toBe("process_failed");
  });
});
