import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DETAILED_OUTCOMES, deriveDetailedOutcome, outcomeIsOpen } from "../contracts/envelope.js";

const outcome = (status: string, disposition: string | null, requestKinds: string[] = []) =>
  deriveDetailedOutcome({ status, disposition, requestKinds });

describe("run outcomes", () => {
  it("calls only a sealed run with a closed seal completed", () => {
    expect(outcome("sealed", "closed")).toBe("completed");
    expect(outcome("failure", "closed")).toBe("failed");
    expect(outcome("sealed", null)).toBe("failed");
    expect(outcome("sealed", "deferred")).toBe("failed");
    expect(outcome("sealed", "something-new")).toBe("failed");
  });

  it("names how a finished run ended by its seal disposition, sealed or failed alike", () => {
    for (const status of ["sealed", "failure"]) {
      expect(outcome(status, "declined")).toBe("declined");
      expect(outcome(status, "blocked")).toBe("blocked");
      expect(outcome(status, "failed")).toBe("failed");
      expect(outcome(status, "killed")).toBe("killed");
      expect(outcome(status, "timed_out")).toBe("timed_out");
      expect(outcome(status, "superseded")).toBe("superseded");
    }
  });

  it("tells what a paused run waits for from its requests", () => {
    expect(outcome("needs_approval", "deferred", ["approval"])).toBe("paused_for_approval");
    expect(outcome("needs_agent", "deferred", ["agent_act"])).toBe("paused_for_agent");
    expect(outcome("needs_agent", "deferred", ["input"])).toBe("paused_for_input");
    expect(outcome("needs_agent", "deferred", ["approval", "input"])).toBe("paused_for_input");
    // An agent among the requests is what the run waits for first.
    expect(outcome("needs_agent", "deferred", ["input", "agent_act"])).toBe("paused_for_agent");
    // No readable request: the status says an agent.
    expect(outcome("needs_agent", null, [])).toBe("paused_for_agent");
  });

  it("keeps a running run running whatever disposition a pause left on it", () => {
    expect(outcome("running", "deferred")).toBe("running");
    expect(outcome("running", null)).toBe("running");
  });

  it("calls running and paused runs open and every finished outcome settled", () => {
    const open = DETAILED_OUTCOMES.filter(outcomeIsOpen);
    expect(open).toEqual([
      "running",
      "paused_for_agent",
      "paused_for_approval",
      "paused_for_input",
    ]);
  });

  it("is the closed set the JSON Schema contract documents", () => {
    const schema = JSON.parse(
      readFileSync(
        join(import.meta.dirname, "../../schemas/console/run-outcome.schema.json"),
        "utf8",
      ),
    ) as { enum: string[]; description: string };
    expect(schema.enum).toEqual([...DETAILED_OUTCOMES]);
    for (const name of DETAILED_OUTCOMES) expect(schema.description).toContain(`${name}:`);
  });
});
