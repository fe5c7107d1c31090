import { describe, expect, it } from "vitest";
import { OUTCOME_GROUPS, OUTCOME_VIEWS, durationText, outcomeView, runCount } from "./outcomes";
import { listInput, readFilters, runsHref } from "./runs-filter";

describe("run outcomes in the console", () => {
  it("offers every outcome once in the filter, each with its own word and icon", () => {
    const offered = OUTCOME_GROUPS.flatMap((g) => g.outcomes);
    expect([...offered].sort()).toEqual(Object.keys(OUTCOME_VIEWS).sort());
    const labels = Object.values(OUTCOME_VIEWS).map((v) => v.label);
    expect(new Set(labels).size).toBe(labels.length);
    expect(OUTCOME_VIEWS.killed.label).toBe("cancelled");
    expect(OUTCOME_VIEWS.completed.icon).not.toBe(OUTCOME_VIEWS.failed.icon);
  });

  it("names an outcome it does not know in words rather than failing", () => {
    expect(outcomeView("rolled_back")).toMatchObject({ label: "rolled back" });
  });

  it("writes durations and counts for people", () => {
    expect(durationText(null)).toBe("—");
    expect(durationText(850)).toBe("850 ms");
    expect(durationText(4_210)).toBe("4.2 s");
    expect(durationText(185_000)).toBe("3 min 5 s");
    expect(durationText(7_800_000)).toBe("2 h 10 min");
    expect(runCount(1, false)).toBe("1 run");
    expect(runCount(12_345, false)).toBe("12,345 runs");
    expect(runCount(1000, true)).toBe("1,000+ runs");
  });

  it("reads the waiting view, the outcome and the skill search from the URL and keeps them in links", () => {
    const f = readFilters({ view: "waiting", outcome: "declined", search: "gat", cursor: "c1" });
    expect(listInput(f)).toEqual({
      limit: 50,
      waitingForMe: true,
      outcome: "declined",
      skillSearch: "gat",
      cursor: "c1",
    });
    expect(runsHref(f, "c2")).toBe("/runs?view=waiting&outcome=declined&search=gat&cursor=c2");
    expect(readFilters({ view: "nonsense" }).view).toBe("all");
    expect(listInput(readFilters({ limit: "10" })).limit).toBe(10);
    expect(readFilters({ limit: "0" }).limit).toBeUndefined();
    expect(readFilters({ limit: "5000" }).limit).toBeUndefined();
    expect(runsHref(readFilters({ limit: "10", outcome: "failed" }))).toBe(
      "/runs?outcome=failed&limit=10",
    );
  });
});
