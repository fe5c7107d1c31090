import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { openStateStore } from "./open.js";
import type { RunRecord, RunStatus, StateStore } from "./state-store.js";
import { fakeClock, runId, sampleRun, tempDir } from "./test-support/fixtures.js";
import type { FakeClock, TempDir } from "./test-support/fixtures.js";

let tmp: TempDir;
let clock: FakeClock;
let store: StateStore;

beforeEach(() => {
  tmp = tempDir();
  clock = fakeClock();
  store = openStateStore({ path: tmp.dbPath, clock: clock.now });
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof RuntimeError) return err.code;
    throw err;
  }
  throw new Error("expected a RuntimeError");
}

describe("runs", () => {
  it("creates a running run stamped by the store's clock", () => {
    const run = store.createRun(sampleRun("run_default_0123456789abcdef"));
    expect(run).toMatchObject({
      id: "run_default_0123456789abcdef",
      status: "running",
      disposition: null,
      executionClosureDigest: null,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:00:00.000Z",
      createdMs: Date.UTC(2026, 0, 1),
    });
    expect(store.getRun(run.id)).toEqual(run);
  });

  it("refuses a second run with the same id", () => {
    store.createRun(sampleRun("run_default_0000000000000001"));
    let caught: unknown;
    try {
      store.createRun(sampleRun("run_default_0000000000000001"));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RuntimeError);
    expect((caught as RuntimeError).code).toBe("STORE_ERROR");
    expect((caught as RuntimeError).details.reason).toBe("run_exists");
  });

  it("updates only the patched fields, clears nulls and bumps updatedAt", () => {
    store.createRun(sampleRun("run_default_0000000000000001", { errorJson: '{"old":true}' }));
    clock.set(Date.UTC(2026, 0, 1, 0, 5));
    const updated = store.updateRun("run_default_0000000000000001", {
      status: "sealed",
      disposition: "closed",
      receiptId: "sha256:abc",
      resultJson: '{"stdout":"hi"}',
      errorJson: null,
    });
    expect(updated).toMatchObject({
      status: "sealed",
      disposition: "closed",
      receiptId: "sha256:abc",
      resultJson: '{"stdout":"hi"}',
      errorJson: null,
      requestsJson: null,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt: "2026-01-01T00:05:00.000Z",
    });
    expect(store.getRun("run_default_0000000000000001")).toEqual(updated);
  });

  it("raises RUN_NOT_FOUND for unknown runs on read and update", () => {
    expect(codeOf(() => store.getRun("run_default_ffffffffffffffff"))).toBe("RUN_NOT_FOUND");
    expect(
      codeOf(() => store.updateRun("run_default_ffffffffffffffff", { status: "failure" })),
    ).toBe("RUN_NOT_FOUND");
  });

  it("refuses a status outside the run status set", () => {
    store.createRun(sampleRun("run_default_0000000000000001"));
    const bogus = "paused" as RunStatus;
    expect(codeOf(() => store.updateRun("run_default_0000000000000001", { status: bogus }))).toBe(
      "STORE_ERROR",
    );
  });
});

describe("listRuns", () => {
  const statuses: RunStatus[] = ["sealed", "running", "needs_agent", "failure"];

  /** 250 runs; every 7 share a millisecond so the id tie-break is exercised. */
  function seed(): RunRecord[] {
    const created: RunRecord[] = [];
    for (let n = 0; n < 250; n += 1) {
      clock.set(Date.UTC(2026, 0, 1) + Math.floor(n / 7));
      created.push(
        store.createRun(
          sampleRun(runId(n), {
            skillName: n % 2 === 0 ? "echo" : "triage",
            status: statuses[n % statuses.length],
          }),
        ),
      );
    }
    return created;
  }

  function newestFirst(rows: RunRecord[]): string[] {
    return [...rows]
      .sort((a, b) =>
        a.createdMs !== b.createdMs ? b.createdMs - a.createdMs : a.id < b.id ? 1 : -1,
      )
      .map((r) => r.id);
  }

  function collect(options: { status?: RunStatus; skillName?: string }, limit: number): string[] {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 1000; pages += 1) {
      const page = store.listRuns({ ...options, limit, cursor });
      expect(page.runs.length).toBeLessThanOrEqual(limit);
      seen.push(...page.runs.map((r) => r.id));
      if (page.nextCursor === null) return seen;
      cursor = page.nextCursor;
    }
    throw new Error("pagination did not terminate");
  }

  it("returns every one of 250 runs exactly once, newest first, across pages", () => {
    const created = seed();
    const seen = collect({}, 40);
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect(seen).toEqual(newestFirst(created));
  });

  it("paginates within status and skill filters", () => {
    const created = seed();
    expect(collect({ status: "sealed" }, 9)).toEqual(
      newestFirst(created.filter((r) => r.status === "sealed")),
    );
    expect(collect({ skillName: "triage" }, 33)).toEqual(
      newestFirst(created.filter((r) => r.skillName === "triage")),
    );
    expect(collect({ status: "running", skillName: "triage" }, 5)).toEqual(
      newestFirst(created.filter((r) => r.status === "running" && r.skillName === "triage")),
    );
  });

  it("does not repeat or skip rows when runs are created between pages", () => {
    const created = seed();
    const first = store.listRuns({ limit: 100 });
    clock.set(Date.UTC(2027, 0, 1));
    store.createRun(sampleRun("run_default_9999999999999999"));
    const rest = collect({}, 100);
    expect(rest[0]).toBe("run_default_9999999999999999");
    const second = store.listRuns({ limit: 500, cursor: first.nextCursor });
    expect([...first.runs, ...second.runs].map((r) => r.id)).toEqual(newestFirst(created));
  });

  it("returns a null cursor on the last page and an empty page for an empty store", () => {
    expect(store.listRuns({ limit: 10 })).toEqual({ runs: [], nextCursor: null });
    store.createRun(sampleRun("run_default_0000000000000001"));
    expect(store.listRuns({ limit: 1 }).nextCursor).toBeNull();
  });

  it("rejects limits outside 1–500 and foreign cursors as USAGE", () => {
    expect(codeOf(() => store.listRuns({ limit: 0 }))).toBe("USAGE");
    expect(codeOf(() => store.listRuns({ limit: 501 }))).toBe("USAGE");
    expect(codeOf(() => store.listRuns({ limit: 1.5 }))).toBe("USAGE");
    expect(codeOf(() => store.listRuns({ limit: 10, cursor: "not-a-cursor" }))).toBe("USAGE");
    const forged = Buffer.from(JSON.stringify([2, 1, "x"])).toString("base64url");
    expect(codeOf(() => store.listRuns({ limit: 10, cursor: forged }))).toBe("USAGE");
  });
});

describe("steps", () => {
  it("inserts, then updates only the provided fields, listing in first-write order", () => {
    store.createRun(sampleRun("run_default_0000000000000001"));
    const run = "run_default_0000000000000001";
    store.upsertStep({ runId: run, stepId: "fetch", status: "running", startedAt: "t1" });
    store.upsertStep({ runId: run, stepId: "analyze", status: "pending" });
    const done = store.upsertStep({
      runId: run,
      stepId: "fetch",
      status: "sealed",
      receiptId: "sha256:r1",
      outputJson: '{"ok":true}',
      finishedAt: "t2",
    });
    expect(done).toEqual({
      runId: run,
      stepId: "fetch",
      status: "sealed",
      attempt: 1,
      receiptId: "sha256:r1",
      outputJson: '{"ok":true}',
      startedAt: "t1",
      finishedAt: "t2",
    });
    store.upsertStep({ runId: run, stepId: "analyze", status: "running", attempt: 2 });
    expect(store.listSteps(run).map((s) => [s.stepId, s.status, s.attempt])).toEqual([
      ["fetch", "sealed", 1],
      ["analyze", "running", 2],
    ]);
    expect(store.listSteps("run_default_ffffffffffffffff")).toEqual([]);
  });

  it("raises RUN_NOT_FOUND for a step of an unknown run", () => {
    expect(
      codeOf(() =>
        store.upsertStep({ runId: "run_default_ffffffffffffffff", stepId: "a", status: "x" }),
      ),
    ).toBe("RUN_NOT_FOUND");
  });
});

describe("receipt index", () => {
  const entry = (n: number, extra: { isChild?: boolean; harness?: boolean } = {}) => ({
    receiptId: `sha256:${n.toString(16).padStart(64, "0")}`,
    skillName: "echo",
    disposition: "closed",
    createdAt: `2026-01-01T00:00:0${n}.000Z`,
    fileName: `sha256-${n.toString(16).padStart(64, "0")}.json`,
    ...extra,
  });

  it("indexes a receipt once however often it is indexed", () => {
    const first = store.indexReceipt(entry(1));
    const again = store.indexReceipt(entry(1));
    expect(again).toEqual(first);
    expect(first).toMatchObject({ runId: null, isChild: false, harness: false });
    expect(store.listIndexedReceipts({ limit: 10, includeChildren: true })).toEqual([first]);
  });

  it("hides children and harness receipts unless asked, newest first", () => {
    store.indexReceipt(entry(1));
    store.indexReceipt(entry(2, { isChild: true }));
    store.indexReceipt(entry(3, { harness: true }));
    store.indexReceipt(entry(4));
    const ids = (opts: { includeChildren?: boolean; includeHarness?: boolean }) =>
      store.listIndexedReceipts({ limit: 10, ...opts }).map((r) => r.createdAt.slice(18, 19));
    expect(ids({})).toEqual(["4", "1"]);
    expect(ids({ includeChildren: true })).toEqual(["4", "2", "1"]);
    expect(ids({ includeChildren: true, includeHarness: true })).toEqual(["4", "3", "2", "1"]);
    expect(codeOf(() => store.listIndexedReceipts({ limit: 0 }))).toBe("USAGE");
  });

  it("finds the rows of any number of receipt ids, skipping ids it has no row for", () => {
    // More ids than one statement binds (500), so the lookup runs in slices.
    const ids: string[] = [];
    for (let n = 1; n <= 1203; n++) {
      if (n % 3 === 0) store.indexReceipt({ ...entry(n), harness: n % 2 === 0, runId: `run_${n}` });
      ids.push(entry(n).receiptId);
    }
    const found = store.findIndexedReceipts(ids);
    expect(found).toHaveLength(401);
    const byId = new Map(found.map((row) => [row.receiptId, row]));
    expect(byId.get(entry(1200).receiptId)).toMatchObject({ runId: "run_1200", harness: true });
    expect(byId.get(entry(3).receiptId)).toMatchObject({ runId: "run_3", harness: false });
    expect(byId.has(entry(1201).receiptId)).toBe(false);
    expect(store.findIndexedReceipts([])).toEqual([]);
  });

  it("marks an indexed receipt as a child when re-indexed as one, never the reverse", () => {
    store.indexReceipt(entry(1));
    expect(store.indexReceipt({ ...entry(1), isChild: true, runId: "run_x" })).toMatchObject({
      isChild: true,
      runId: "run_x",
    });
    expect(store.indexReceipt({ ...entry(1), isChild: false, runId: "run_y" })).toMatchObject({
      isChild: true,
      runId: "run_x",
    });
  });
});

describe("close", () => {
  it("is idempotent and later calls raise STORE_ERROR", () => {
    store.close();
    store.close();
    expect(codeOf(() => store.listRuns({ limit: 1 }))).toBe("STORE_ERROR");
  });

  it("opens an in-memory store with the same schema", () => {
    const memory = openStateStore({ path: ":memory:" });
    memory.createRun(sampleRun("run_default_0000000000000001"));
    expect(memory.listRuns({ limit: 5 }).runs).toHaveLength(1);
    memory.close();
  });
});
