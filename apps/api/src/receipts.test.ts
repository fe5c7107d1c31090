/**
 * Receipt verification through the router (the console's receipt page and its Verify
 * action): every role reads the same report of a real run's receipts, the failed check
 * named once a stored receipt is edited; no session, no report.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TRPCError } from "@trpc/server";
import type { Operator } from "@runx/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiEvents } from "./events.js";
import { inlineExecutor } from "./inline-executor.js";
import { appRouter } from "./router.js";
import { sessionKeys } from "./session.js";
import { apiFixture, PASSWORD, requestContext } from "./test-support.js";
import type { ApiFixture } from "./test-support.js";
import { createCallerFactory } from "./trpc.js";

let fx: ApiFixture;
let events: ApiEvents;
const createCaller = createCallerFactory(appRouter);
const sessions = sessionKeys(randomBytes(32));

beforeEach(() => {
  fx = apiFixture();
  events = new ApiEvents();
});
afterEach(() => fx.cleanup());

function caller(operator: Operator | null) {
  return createCaller({
    runtime: fx.runtime,
    sessions,
    executor: inlineExecutor(fx.runtime, events),
    events,
    operator,
    ...requestContext(),
    setSession: () => undefined,
  });
}

const add = (username: string, role: Operator["role"]) =>
  fx.runtime.console.operators.add({ username, role, password: PASSWORD });

async function trpcCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    return (error as TRPCError).code;
  }
  return "OK";
}

/** A gated-echo run started by `starter`, approved by `approver`, sealed. */
async function sealedRun(starter: Operator, approver: Operator): Promise<string> {
  const started = await caller(starter).runs.start({
    skill: "skills/gated-echo",
    inputs: { message: "hi" },
  });
  const [pending] = await caller(approver).approvals.pending();
  await caller(approver).approvals.decide({
    runId: started.runId,
    gateId: pending!.gateId,
    decision: "approve",
    reason: "checked",
  });
  return started.runId;
}

describe("receipts.verify", () => {
  it("gives viewers, approvers and admins the same named checks, and nothing without a session", async () => {
    const viewer = await add("vera", "viewer");
    const alice = await add("alice", "approver");
    const bob = await add("bob", "approver");
    const admin = await add("ada", "admin");
    const runId = await sealedRun(alice, bob);
    const dag = await caller(viewer).receipts.dag({ runId });
    const receiptId = dag.rootReceiptId;

    const reports = await Promise.all(
      [viewer, bob, admin].map((op) => caller(op).receipts.verify({ receiptId })),
    );
    for (const report of reports) {
      expect(report).toMatchObject({
        schema: "runx.receipt_report.v1",
        receipt_id: receiptId,
        status: "unverified",
        failed_check: null,
        signer: { signature_kind: "local-development" },
      });
      expect(report.checks.map((c) => [c.name, c.ok])).toEqual(
        reports[0]!.checks.map((c) => [c.name, c.ok]),
      );
    }
    expect(reports[0]!.commits!.children.length).toBeGreaterThan(0);
    expect(await trpcCode(caller(null).receipts.verify({ receiptId }))).toBe("UNAUTHORIZED");
  });

  it("names the failed check of an edited receipt, and refuses an id that is no receipt id", async () => {
    const viewer = await add("vera", "viewer");
    const runId = await sealedRun(await add("alice", "approver"), await add("bob", "approver"));
    const { rootReceiptId } = await caller(viewer).receipts.dag({ runId });
    const file = join(fx.ws.root, ".runx", "receipts", `${rootReceiptId.replace(":", "-")}.json`);
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace(/"summary":"([^"]*)"/, '"summary":"$1 (edited)"'));
    const report = await caller(viewer).receipts.verify({ receiptId: rootReceiptId });
    expect(report.status).toBe("invalid");
    expect(report.failed_check).toMatchObject({
      name: "content_address",
      message: "receipt id is not the digest of its body",
    });
    expect(
      await trpcCode(caller(viewer).receipts.verify({ receiptId: `sha256:${"1".repeat(64)}` })),
    ).toBe("NOT_FOUND");
    expect(await trpcCode(caller(viewer).receipts.verify({ receiptId: "sha256:../x" }))).toBe(
      "BAD_REQUEST",
    );
  });
});

describe("receipts.page", () => {
  it("pages a run's receipt graph by cursor, matching the whole graph, and refuses a bad cursor", async () => {
    const viewer = await add("vera", "viewer");
    const runId = await sealedRun(await add("alice", "approver"), await add("bob", "approver"));
    const dag = await caller(viewer).receipts.dag({ runId });
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await caller(viewer).receipts.page({
        runId,
        limit: 1,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      expect(page.nodes.length).toBeLessThanOrEqual(1);
      expect(page.total).toBe(dag.nodes.length);
      ids.push(...page.nodes.map((n) => n.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect([...ids].sort()).toEqual(dag.nodes.map((n) => n.id).sort());
    expect(ids[0]).toBe(dag.rootReceiptId);
    expect(await trpcCode(caller(viewer).receipts.page({ runId, cursor: "x" }))).toBe(
      "BAD_REQUEST",
    );
    expect(await trpcCode(caller(null).receipts.page({ runId }))).toBe("UNAUTHORIZED");
  });
});
