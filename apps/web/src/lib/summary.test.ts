import { describe, expect, it } from "vitest";
import { summaryRows } from "./summary";

describe("the approval card's summary rows", () => {
  it("names the grant and principal a provider effect runs under, in a fixed order", () => {
    const rows = summaryRows({
      provider: "outbox",
      operation: "message.send",
      target: "customers",
      scopes: ["message.send"],
      grant_ref: "runx:grant:outbox",
      principal_ref: "runx:principal:local_runtime",
      payload_digest: "sha256:aa",
      plan_digest: "sha256:bb",
      required_scopes: ["message.send"],
    });
    expect(rows.map((r) => [r.label, r.value])).toEqual([
      ["Provider", "outbox"],
      ["Operation", "message.send"],
      ["Target", "customers"],
      ["Scopes", "message.send"],
      ["Provider grant", "runx:grant:outbox"],
      ["Grant held by", "runx:principal:local_runtime"],
      ["Payload digest", "sha256:aa"],
      ["Plan digest", "sha256:bb"],
    ]);
  });
});
