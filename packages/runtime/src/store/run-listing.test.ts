/**
 * The outcome column (written by the state store, backfilled by migration 0006) and the
 * console's filtered listing over it: every outcome's filter, skill search, the count, and
 * keyset pages in both directions.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DETAILED_OUTCOMES, deriveDetailedOutcome } from "../contracts/envelope.js";
import { consoleStoreExtension } from "./console-store.js";
import type { ConsoleStore, RunFilter } from "./console-store.js";
import { openStateStore } from "./open.js";
import { RUN_STATUSES } from "./schema.js";
import {
  fakeClock,
  insertLegacyRun,
  migrationsUpTo,
  runId,
  sampleRun,
  tempDir,
} from "./test-support/fixtures.js";
import type { FakeClock, TempDir } from "./test-support/fixtures.js";
import type { RunStatus, StateStore } from "./types.js";

let tmp: TempDir;
let clock: FakeClock;
let state: StateStore;
let store: ConsoleStore;

beforeEach(() => {
  tmp = tempDir();
  clock = fakeClock();
  state = openStateStore({ path: tmp.dbPath, clock: clock.now });
  store = state.attach(consoleStoreExtension);
});
afterEach(() => {
  state.close();
  tmp.cleanup();
});

const requests = (...kinds: string[]) =>
  JSON.stringify(kinds.map((kind, i) => ({ id: `r${i}`, kind })));

/** Every status with the dispositions and requests runs are seen with, and odd ones. */
const GRID: Array<{ status: RunStatus; disposition: string | null; requestsJson: string | null }> =
  [
    ...["closed", "failed", "declined", "blocked", "killed", "timed_out", "superseded"].flatMap(
      (disposition) =>
        (["sealed", "failure"] as const).map((status) => ({
          status,
          disposition,
          requestsJson: null,
        })),
    ),
    { status: "sealed", disposition: null, requestsJson: null },
    { status: "sealed", disposition: "deferred", requestsJson: null },
    { status: "failure", disposition: null, requestsJson: null },
    { status: "running", disposition: null, requestsJson: null },
    { status: "running", disposition: "deferred", requestsJson: requests("input") },
    { status: "needs_approval", disposition: "deferred", requestsJson: requests("approval") },
    { status: "needs_agent", disposition: "deferred", requestsJson: requests("agent_act") },
    { status: "needs_agent", disposition: "deferred", requestsJson: requests("input") },
    { status: "needs_agent", disposition: "deferred", requestsJson: requests("approval", "input") },
    {
      status: "needs_agent",
      disposition: "deferred",
      requestsJson: requests("input", "agent_act"),
    },
    { status: "needs_agent", disposition: "deferred", requestsJson: "not json" },
    { status: "needs_agent", disposition: "deferred", requestsJson: null },
  ];

const kindsOf = (json: string | null): string[] => {
  try {
    return (JSON.parse(json ?? "[]") as Array<{ kind: string }>).map((r) => r.kind);
  } catch {
    return [];
  }
};
const expected = (row: (typeof GRID)[number]) =>
  deriveDetailedOutcome({
    status: row.status,
    disposition: row.disposition,
    requestKinds: kindsOf(row.requestsJson),
  });

/** One run per GRID row, one second apart (runs[0] oldest). */
function seedGrid(): Array<{ id: string; outcome: string }> {
  return GRID.map((row, i) => {
    clock.set(Date.UTC(2026, 0, 1) + i * 1000);
    const id = runId(i + 1);
    state.createRun(sampleRun(id, { skillName: `skill-${i % 3}` }));
    state.updateRun(id, row);
    return { id, outcome: expected(row) };
  });
}

const list = (filter: Omit<RunFilter, "limit"> & { limit?: number }) =>
  store.listRunsFiltered({ limit: 500, ...filter });

describe("the outcome column", () => {
  it("follows status, disposition and requests through a run's life, whatever a patch leaves out", () => {
    const id = runId(1);
    expect(state.createRun(sampleRun(id)).outcome).toBe("running");
    expect(
      state.updateRun(id, {
        status: "needs_agent",
        disposition: "deferred",
        requestsJson: requests("input"),
      }).outcome,
    ).toBe("paused_for_input");
    // A resume changes only the status: the pause's requests stay on the row.
    expect(state.updateRun(id, { status: "running" }).outcome).toBe("running");
    expect(state.updateRun(id, { status: "needs_agent" }).outcome).toBe("paused_for_input");
    expect(state.updateRun(id, { requestsJson: requests("agent_act") }).outcome).toBe(
      "paused_for_agent",
    );
    expect(
      state.updateRun(id, { status: "sealed", disposition: "declined", requestsJson: null })
        .outcome,
    ).toBe("declined");
    expect(state.updateRun(id, { errorJson: "{}" }).outcome).toBe("declined");
    expect(state.updateRun(id, { disposition: "closed" }).outcome).toBe("completed");
    expect(state.getRun(id).outcome).toBe("completed");
  });

  it("is written for every status and disposition as deriveDetailedOutcome reads them", () => {
    for (const run of seedGrid()) expect(state.getRun(run.id).outcome).toBe(run.outcome);
  });

  it("is backfilled by migration 0006 for the runs a database already holds", () => {
    state.close();
    tmp.cleanup();
    tmp = tempDir();
    const old = migrationsUpTo(join(tmp.dir, "migrations-0005"), "0005_approval_decisions_pause");
    const before = openStateStore({ path: tmp.dbPath, migrationsDir: old, clock: clock.now });
    const legacy = before.attach(({ sqlite }) => sqlite);
    GRID.forEach((row, i) => insertLegacyRun(legacy, runId(i + 1), { ...row, createdMs: i }));
    before.close();

    state = openStateStore({ path: tmp.dbPath, clock: clock.now });
    store = state.attach(consoleStoreExtension);
    GRID.forEach((row, i) => expect(state.getRun(runId(i + 1)).outcome).toBe(expected(row)));
  });
});

describe("the filtered run listing", () => {
  it("finds the runs of each outcome, and only them, with their count", () => {
    const runs = seedGrid();
    for (const outcome of DETAILED_OUTCOMES) {
      const ids = runs.filter((r) => r.outcome === outcome).map((r) => r.id);
      const page = list({ outcome });
      expect(page.runs.map((r) => r.id).sort()).toEqual([...ids].sort());
      expect(page.total).toBe(ids.length);
      expect(page.totalCapped).toBe(false);
    }
    expect(list({ outcome: "declined" }).total).toBe(2);
    expect(list({}).total).toBe(GRID.length);
  });

  it("keeps the status filter meaning the run's status", () => {
    seedGrid();
    for (const status of RUN_STATUSES) {
      const page = list({ status });
      expect(page.runs.every((r) => r.status === status)).toBe(true);
      expect(page.total).toBe(GRID.filter((r) => r.status === status).length);
    }
    expect(list({ status: "sealed", outcome: "declined" }).total).toBe(1);
    expect(list({ status: "needs_agent", outcome: "declined" }).total).toBe(0);
  });

  it("searches skill names by any part in any case, pattern characters taken literally", () => {
    const names = ["echo", "Echo-Two", "review_and-record", "reviewXand", "a%b", "other"];
    names.forEach((skillName, i) => {
      clock.set(Date.UTC(2026, 0, 1) + i * 1000);
      state.createRun(sampleRun(runId(i + 1), { skillName }));
    });
    const found = (skillSearch: string) =>
      list({ skillSearch })
        .runs.map((r) => r.skillName)
        .sort();
    expect(found("ECHO")).toEqual(["Echo-Two", "echo"]);
    expect(found("o-t")).toEqual(["Echo-Two"]);
    expect(found("_and")).toEqual(["review_and-record"]);
    expect(found("%")).toEqual(["a%b"]);
    expect(list({ skillSearch: "zzz" })).toEqual({
      runs: [],
      nextCursor: null,
      prevCursor: null,
      total: 0,
      totalCapped: false,
    });
    expect(list({ skillSearch: "echo", skillName: "echo" }).total).toBe(1);
    expect(list({ skillSearch: "echo", outcome: "running" }).total).toBe(2);
  });

  it("pages both ways with opaque cursors: every run once, same pages back, the count on each", () => {
    const ids = Array.from({ length: 23 }, (_, i) => {
      clock.set(Date.UTC(2026, 0, 1) + Math.floor(i / 2) * 1000); // pairs share a time
      return state.createRun(sampleRun(runId(i + 1))).id;
    });
    const newestFirst = ids
      .map((id) => state.getRun(id))
      .sort((a, b) => b.createdMs - a.createdMs || (b.id > a.id ? 1 : b.id < a.id ? -1 : 0))
      .map((r) => r.id);

    const forward: string[][] = [];
    let page = list({ limit: 5 });
    expect(page.prevCursor).toBeNull();
    for (;;) {
      expect(page.total).toBe(23);
      forward.push(page.runs.map((r) => r.id));
      if (page.nextCursor === null) break;
      page = list({ limit: 5, cursor: page.nextCursor });
      expect(page.prevCursor).not.toBeNull();
    }
    expect(forward.flat()).toEqual(newestFirst);
    expect(forward.map((p) => p.length)).toEqual([5, 5, 5, 5, 3]);

    const backward: string[][] = [forward[forward.length - 1]!];
    while (page.prevCursor !== null) {
      page = list({ limit: 5, cursor: page.prevCursor });
      expect(page.nextCursor).not.toBeNull();
      backward.unshift(page.runs.map((r) => r.id));
    }
    expect(backward).toEqual(forward);
  });

  it("keeps a page's neighbours when runs start meanwhile; a step back near the top is the first page", () => {
    for (let i = 0; i < 12; i++) {
      clock.set(Date.UTC(2026, 0, 1) + i * 1000);
      state.createRun(sampleRun(runId(i + 1)));
    }
    const first = list({ limit: 5 });
    const second = list({ limit: 5, cursor: first.nextCursor });
    clock.set(Date.UTC(2026, 0, 2));
    state.createRun(sampleRun(runId(100)));
    state.createRun(sampleRun(runId(101)));
    // Next from the first page still continues after its last row.
    expect(list({ limit: 5, cursor: first.nextCursor }).runs).toEqual(second.runs);
    // Back from the second page: the page above it, as it was, with the new runs above that.
    const back = list({ limit: 5, cursor: second.prevCursor });
    expect(back.runs).toEqual(first.runs);
    expect(back.prevCursor).not.toBeNull();
    // Fewer newer runs than a page above it: the first page as it is now, full.
    const top = list({ limit: 5, cursor: back.prevCursor });
    expect(top.runs.map((r) => r.id)).toEqual(list({ limit: 5 }).runs.map((r) => r.id));
    expect(top.runs.map((r) => r.id).slice(0, 2)).toEqual(
      [runId(101), runId(100)].sort().reverse(),
    );
    expect(top.prevCursor).toBeNull();
    expect(top.total).toBe(14);
  });

  it("pages within a filter and refuses a cursor it did not hand out", () => {
    seedGrid();
    const failed = list({ outcome: "failed", limit: 2 });
    expect(failed.runs.every((r) => r.outcome === "failed")).toBe(true);
    const next = list({ outcome: "failed", limit: 2, cursor: failed.nextCursor });
    expect(next.runs.every((r) => r.outcome === "failed")).toBe(true);
    expect(next.total).toBe(failed.total);
    expect(() => list({ cursor: "garbage" })).toThrow(
      expect.objectContaining({
        code: "USAGE",
        details: expect.objectContaining({ path: "cursor" }),
      }),
    );
    // The CLI's listing pages only towards older runs.
    expect(() => state.listRuns({ limit: 2, cursor: next.prevCursor })).toThrow(
      expect.objectContaining({ code: "USAGE" }),
    );
  });
});
