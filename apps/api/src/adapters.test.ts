/**
 * `adapters.attempts` and `adapters.cancel` against a real runtime and the shipped fake-local
 * adapter: a console-started run records a dry run unless its initiator grants spawn authority
 * (`runs.start` with `allowSpawn`, approvers and admins only), a console approval is signed as
 * the operator who gave it, and a spawning run started elsewhere shows as in flight and is
 * cancelled through the API.
 */
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TRPCError } from "@trpc/server";
import { createRuntime } from "@runx/runtime";
import type { Operator, SkillRunEnvelope } from "@runx/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../../packages/runtime/src/testing/cli.js";
import { ApiEvents } from "./events.js";
import { inlineExecutor } from "./inline-executor.js";
import { appRouter } from "./router.js";
import { sessionKeys } from "./session.js";
import { apiFixture, PASSWORD, requestContext } from "./test-support.js";
import type { ApiFixture } from "./test-support.js";
import { createCallerFactory } from "./trpc.js";

const SKILL_YAML = `skill: dispatch
runners:
  dispatch:
    default: true
    type: adapter
    adapter:
      id: fake-local
      lane: plain-agent
      authority: [read_only]
    inputs:
      objective: {type: string, required: false}
      acceptance_criteria: {type: array, required: false}
      verification: {type: array, required: false}
      fixture_mode: {type: string, required: false}
  reviewed:
    type: adapter
    adapter:
      id: fake-local
      lane: plain-agent
      authority: [read_only, human_approval_required]
    inputs:
      objective: {type: string, required: false}
      acceptance_criteria: {type: array, required: false}
      verification: {type: array, required: false}
`;

const INPUTS = {
  objective: "Summarize the README",
  acceptance_criteria: ["a summary exists"],
  verification: ["test -f evidence.txt"],
};

let fx: ApiFixture;
const events = new ApiEvents();
const createCaller = createCallerFactory(appRouter);
const sessions = sessionKeys(randomBytes(32));

beforeEach(() => {
  fx = apiFixture();
  cpSync(
    join(REPO_ROOT, "packages", "runtime", "fixtures", "adapters"),
    join(fx.ws.root, "adapters"),
    {
      recursive: true,
    },
  );
  fx.ws.write(
    "skills/dispatch/SKILL.md",
    "---\nname: dispatch\n---\nHands a packet to fake-local.\n",
  );
  fx.ws.write("skills/dispatch/X.yaml", SKILL_YAML);
  fx.runtime.adapters.trust("fake-local");
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

async function as(role: Operator["role"], username: string = role): Promise<Operator> {
  return fx.runtime.console.operators.add({ username, role, password: PASSWORD });
}

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    return (error as TRPCError).code;
  }
  return "OK";
}

async function until<T>(probe: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("timed out");
}

describe("adapters.attempts", () => {
  it("lists a console-started run's dry-run attempt with its verified receipt", async () => {
    const approver = await as("approver");
    const viewer = await as("viewer");
    const started = await caller(approver).runs.start({ skill: "skills/dispatch", inputs: INPUTS });
    expect(started).toMatchObject({ state: "settled", envelope: { status: "sealed" } });

    const state = await caller(viewer).adapters.attempts({ runId: started.runId });
    expect(state.running).toEqual([]);
    expect(state.attempts).toHaveLength(1);
    const [attempt] = state.attempts;
    expect(attempt).toMatchObject({
      verified: true,
      lane: "plain-agent",
      receipt: { status: expect.stringMatching(/^(verified|unverified)$/), failed_check: null },
      dispatch: {
        run_id: started.runId,
        adapter_id: "fake-local",
        status: "dry_run",
        failure: { code: "spawn_authority_missing" },
        spawn_authority: { granted: false },
        process: { spawned: false },
      },
    });
    // The receipt it links to is the one the receipt page loads, with the same status.
    const detail = await caller(viewer).receipts.get({ receiptId: attempt!.receipt_id });
    expect(detail.verification?.status).toBe(attempt!.receipt.status);
    // Once the package changes, its lane no longer speaks for this attempt.
    fx.ws.write("skills/dispatch/X.yaml", SKILL_YAML.replace("plain-agent", "coding-agent"));
    const [changed] = (await caller(viewer).adapters.attempts({ runId: started.runId })).attempts;
    expect(changed).toMatchObject({ verified: true, lane: null });
    // Nothing is in flight, so there is nothing to cancel.
    expect(await code(caller(approver).adapters.cancel({ runId: started.runId }))).toBe("CONFLICT");
  });

  it("reports a tampered attempt document as invalid and a run without dispatches as empty", async () => {
    const approver = await as("approver");
    const started = await caller(approver).runs.start({ skill: "skills/dispatch", inputs: INPUTS });
    const dir = join(fx.ws.root, ".runx", "runs", started.runId, "dispatches");
    const file = join(dir, "dispatch-1.json");
    const record = JSON.parse(readFileSync(file, "utf8")) as {
      dispatch: { status: string };
    };
    record.dispatch.status = "completed";
    writeFileSync(file, JSON.stringify(record));
    const [attempt] = (await caller(approver).adapters.attempts({ runId: started.runId })).attempts;
    expect(attempt).toMatchObject({
      verified: false,
      receipt: { status: "invalid", failed_check: "dispatch_document_mismatch" },
    });

    // A missing receipt is reported as such.
    rmSync(
      join(
        fx.ws.root,
        ".runx",
        "receipts",
        `sha256-${attempt!.receipt_id.slice("sha256:".length)}.json`,
      ),
    );
    const [gone] = (await caller(approver).adapters.attempts({ runId: started.runId })).attempts;
    expect(gone).toMatchObject({
      verified: false,
      receipt: { status: "missing", failed_check: "receipt_missing" },
    });

    const echo = await caller(approver).runs.start({
      skill: "skills/echo",
      inputs: { message: "x" },
    });
    expect(await caller(approver).adapters.attempts({ runId: echo.runId })).toEqual({
      attempts: [],
      running: [],
    });
  });
});

describe("spawn authority granted from the console", () => {
  it("launches only when the initiator grants it, and records who granted it", async () => {
    const approver = await as("approver", "grace");
    const viewer = await as("viewer");
    // A viewer can neither start a run nor grant spawn authority.
    expect(
      await code(
        caller(viewer).runs.start({ skill: "skills/dispatch", inputs: INPUTS, allowSpawn: true }),
      ),
    ).toBe("FORBIDDEN");
    const started = await caller(approver).runs.start({
      skill: "skills/dispatch",
      inputs: INPUTS,
      allowSpawn: true,
    });
    expect(started).toMatchObject({ state: "settled", envelope: { status: "sealed" } });
    const [attempt] = (await caller(viewer).adapters.attempts({ runId: started.runId })).attempts;
    expect(attempt).toMatchObject({
      verified: true,
      dispatch: {
        status: "completed",
        spawn_authority: {
          granted: true,
          source: "console",
          principal: "runx:principal:operator:grace",
        },
        invoked_by: "runx:principal:operator:grace",
        process: { spawned: true },
      },
    });
    const detail = await caller(viewer).runs.get({ runId: started.runId });
    expect(detail.run).toMatchObject({ initiator: "grace", spawnGranted: true });
    // Not asked for: the same skill is a recorded dry run.
    const dry = await caller(approver).runs.start({ skill: "skills/dispatch", inputs: INPUTS });
    const [dryAttempt] = (await caller(viewer).adapters.attempts({ runId: dry.runId })).attempts;
    expect(dryAttempt?.dispatch).toMatchObject({
      status: "dry_run",
      failure: { code: "spawn_authority_missing" },
      spawn_authority: { granted: false, principal: null },
    });
    expect((await caller(viewer).runs.get({ runId: dry.runId })).run.spawnGranted).toBe(false);
  });

  it("signs a console approval of a dispatch as the operator who approved it", async () => {
    const starter = await as("approver", "grace");
    const approver = await as("approver", "alan");
    const started = await caller(starter).runs.start({
      skill: "skills/dispatch",
      runner: "reviewed",
      inputs: INPUTS,
      allowSpawn: true,
    });
    expect(started).toMatchObject({ state: "settled", envelope: { status: "needs_approval" } });
    const [gate] = await caller(approver).approvals.pending();
    expect(gate).toMatchObject({
      runId: started.runId,
      gateType: "adapter_dispatch",
      spawnGrantedBy: "grace",
      summary: expect.objectContaining({ adapter_id: "fake-local" }),
    });
    // Separation of duties: the initiator may not approve their own dispatch.
    expect(
      await code(
        caller(starter).approvals.decide({
          runId: started.runId,
          gateId: gate!.gateId,
          decision: "approve",
          reason: "mine",
        }),
      ),
    ).toBe("FORBIDDEN");
    const decided = await caller(approver).approvals.decide({
      runId: started.runId,
      gateId: gate!.gateId,
      decision: "approve",
      reason: "read only, no network",
    });
    expect(decided).toMatchObject({ releasable: true, run: { state: "settled" } });
    const [attempt] = (await caller(approver).adapters.attempts({ runId: started.runId })).attempts;
    expect(attempt?.dispatch).toMatchObject({
      status: "completed",
      approval: { approver: "runx:principal:operator:alan" },
      spawn_authority: { source: "console", principal: "runx:principal:operator:grace" },
    });
    const sealed = await caller(approver).receipts.get({
      receiptId: (decided.run as { envelope: { receipt_id: string } }).envelope.receipt_id,
    });
    const terms = (
      sealed.receipt as unknown as {
        authority: { terms: Array<{ approvals: Array<{ approved_by_ref: { uri: string } }> }> };
      }
    ).authority.terms;
    expect(terms.flatMap((t) => t.approvals.map((a) => a.approved_by_ref.uri))).toEqual([
      "runx:principal:operator:alan",
    ]);
  });
});

describe("adapters.cancel", () => {
  it("cancels a spawning dispatch started by another process", async () => {
    const approver = await as("approver");
    const viewer = await as("viewer");
    // What `runx skill dispatch --allow-spawn` does in another process (fixture modes on).
    const other = createRuntime({
      ...fx.options,
      env: { ...fx.options.env, RUNX_ADAPTER_FIXTURE_MODES: "1" },
    });
    try {
      const running: Promise<SkillRunEnvelope> = other.runSkill({
        ref: "skills/dispatch",
        inputs: Object.fromEntries(
          Object.entries({ ...INPUTS, fixture_mode: "sleep" }).map(([k, v]) => [
            k,
            { value: v as never },
          ]),
        ),
        secretEnv: [],
        allowSpawn: true,
      });
      // Its run id is the one directory under .runx/runs with an attempt in flight.
      const runs = join(fx.ws.root, ".runx", "runs");
      const runId = await until(async () => {
        if (!existsSync(runs)) return undefined;
        for (const id of readdirSync(runs)) {
          const state = await caller(viewer).adapters.attempts({ runId: id });
          if (state.running.length > 0) return id;
        }
        return undefined;
      });
      const state = await caller(viewer).adapters.attempts({ runId });
      expect(state.running).toEqual([
        { step_id: "dispatch", attempt: 1, started_at: expect.any(String) },
      ]);
      expect(await code(caller(viewer).adapters.cancel({ runId }))).toBe("FORBIDDEN");
      expect(await caller(approver).adapters.cancel({ runId })).toEqual({
        run_id: runId,
        requested: true,
      });
      const envelope = await running;
      expect(envelope.closure?.disposition).toBe("killed");
      const after = await caller(viewer).adapters.attempts({ runId });
      expect(after.running).toEqual([]);
      expect(after.attempts).toHaveLength(1);
      expect(after.attempts[0]).toMatchObject({
        verified: true,
        lane: "plain-agent",
        dispatch: {
          status: "cancelled",
          failure: { code: "cancelled" },
          process: { spawned: true, cancelled: true },
        },
      });
      // Cancelling again finds nothing in flight.
      expect(await code(caller(approver).adapters.cancel({ runId }))).toBe("CONFLICT");
    } finally {
      other.close();
    }
  });

  it("maps a run without dispatch state to NOT_FOUND", async () => {
    const approver = await as("approver");
    expect(
      await code(caller(approver).adapters.cancel({ runId: "run_console_0000000000000000" })),
    ).toBe("NOT_FOUND");
  });
});
