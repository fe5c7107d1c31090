import { describe, expect, it } from "vitest";
import { packageArtifacts } from "./artifacts.js";
import { resolvePath } from "./references.js";

describe("artifact envelopes of step outputs", () => {
  it("leaves an output without wrap_as or named_emits as it is", () => {
    const output = { verdict: "approve" };
    expect(packageArtifacts(output, undefined)).toBe(output);
    expect(packageArtifacts(output, { emits: "verdict" })).toBe(output);
  });

  it("wraps the whole output under wrap_as as {data}; the packet id stays out of the envelope", () => {
    const output = { twitter_plan: { decision: "ready" } };
    const packaged = packageArtifacts(output, {
      wrap_as: "twitter_plan",
      packet: "twitter.plan.v1",
    });
    expect(packaged).toEqual({
      twitter_plan: { data: output },
    });
    // What a later step's context edge `draft.twitter_plan.data` reads.
    expect(resolvePath(packaged, ["twitter_plan", "data"])).toEqual(output);
  });

  it("wraps a wrap_as output without a packet id the same way", () => {
    expect(packageArtifacts({ a: 1 }, { wrap_as: "result" })).toEqual({
      result: { data: { a: 1 } },
    });
  });

  it("emits each named_emits field as an envelope and keeps the other fields", () => {
    const output = { brand_voice_draft: { decision: "ready" }, notes: "kept" };
    const packaged = packageArtifacts(output, {
      named_emits: { brand_voice_draft: "brand_voice_draft", summary: "absent" },
      packets: { brand_voice_draft: "runx.context.brand_voice.v1" },
    });
    expect(packaged).toEqual({
      brand_voice_draft: { data: { decision: "ready" } },
      notes: "kept",
    });
    expect(resolvePath(packaged, ["brand_voice_draft", "data", "decision"])).toBe("ready");
  });
});
