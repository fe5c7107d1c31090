/** Catalog, data views, run resumption and cross-process live updates through createCaller. */
import { randomBytes } from "node:crypto";
import { TRPCError } from "@trpc/server";
import type { Operator } from "@runx/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runx } from "../../../packages/runtime/src/testing/cli.js";
import { ApiEvents } from "./events.js";
import type { RunEvent } from "./events.js";
import { inlineExecutor } from "./inline-executor.js";
import { appRouter } from "./router.js";
import { watchRuns } from "./run-watcher.js";
import { sessionKeys } from "./session.js";
import { apiFixture, PASSWORD, requestContext } from "./test-support.js";
import type { ApiFixture } from "./test-support.js";
import { createCallerFactory } from "./trpc.js";

let fx: ApiFixture;
let events: ApiEvents;
let op: Operator;
const createCaller = createCallerFactory(appRouter);
const sessions = sessionKeys(randomBytes(32));

beforeEach(async () => {
  fx = apiFixture();
  events = new ApiEvents();
  op = await fx.runtime.console.operators.add({
    username: "alice",
    role: "approver",
    password: PASSWORD,
  });
});
afterEach(() => fx.cleanup());

function caller() {
  return createCaller({
    runtime: fx.runtime,
    sessions,
    executor: inlineExecutor(fx.runtime, events),
    events,
    operator: op,
    ...requestContext(),
    setSession: () => undefined,
  });
}

async function failure(promise: Promise<unknown>): Promise<TRPCError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    return error as TRPCError;
  }
  throw new Error("expected a failure");
}

describe("skills catalog", () => {
  beforeEach(() => {
    fx.ws.write(
      "skills/invoice-check/SKILL.md",
      "---\nname: invoice-check\ndescription: Checks an invoice total.\nrunx:\n  tags: [finance, audit]\n---\nChecks.\n",
    );
    fx.ws.write(
      "skills/invoice-check/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: cli-tool",
        "    command: cat",
        "    input_mode: stdin",
        "    inputs:",
        "      total: {type: number, required: true, description: Invoice total}",
        "      currency: {type: string, required: false, default: EUR}",
        "",
      ].join("\n"),
    );
  });

  it("searches workspace skills by tag and returns runners with input details", async () => {
    const hits = await caller().skills.search({ query: "AUDIT" });
    expect(hits.map((h) => h.name)).toEqual(["invoice-check"]);
    expect(hits[0]).toMatchObject({
      ref: "skills/invoice-check",
      source: "workspace",
      trustTier: "workspace",
      tags: ["finance", "audit"],
      status: "ok",
      runners: [
        {
          name: "default",
          type: "cli-tool",
          inputs: [
            {
              name: "total",
              type: "number",
              required: true,
              description: "Invoice total",
              default: null,
            },
            {
              name: "currency",
              type: "string",
              required: false,
              description: null,
              default: "EUR",
            },
          ],
        },
      ],
    });
    expect((await caller().skills.search({ query: "invoice total" })).map((h) => h.name)).toEqual([
      "invoice-check",
    ]);
    expect(await caller().skills.search({ query: "no such thing" })).toEqual([]);
  });

  it("includes verified local-registry records with their trust tier", async () => {
    await fx.runtime.registry().publish(`${fx.ws.root}/skills/invoice-check`, {
      owner: "acme",
      version: "1.2.0",
    });
    const hits = await caller().skills.search({ query: "finance" });
    expect(hits.map((h) => [h.ref, h.source, h.trustTier])).toEqual([
      ["skills/invoice-check", "workspace", "workspace"],
      ["acme/invoice-check@1.2.0", "registry", "community"],
    ]);
    expect(hits[1]!.runners[0]!.inputs.map((i) => i.name)).toEqual(["total", "currency"]);
    const one = await caller().skills.get({ skill: "acme/invoice-check@1.2.0" });
    expect(one).toMatchObject({ source: "registry", version: "1.2.0" });
    expect((await caller().skills.search({ query: "finance", limit: 1 })).length).toBe(1);
  });

  it("gets one workspace skill by path or name; an unknown one is NOT_FOUND", async () => {
    expect((await caller().skills.get({ skill: "skills/echo" })).runners[0]!.inputs).toEqual([
      expect.objectContaining({ name: "message", required: true }),
    ]);
    expect((await caller().skills.get({ skill: "invoice-check" })).ref).toBe(
      "skills/invoice-check",
    );
    const error = await failure(caller().skills.get({ skill: "skills/missing" }));
    expect(error.code).toBe("NOT_FOUND");
  });
});

describe("data views", () => {
  it("lists data sources (the implicit local rule included)", async () => {
    const view = await caller().data.sources();
    expect(view.sources).toEqual([]);
    expect(view.local_default.database_path).toMatch(/local-sources\/.*\.sqlite$/);
    expect(await caller().data.status()).toEqual({ available: true, sources: 0, reason: null });
  });

  it("maps a malformed data-sources document to UNPROCESSABLE_CONTENT naming the problem", async () => {
    fx.ws.write(".runx/data-sources.json", "{ not json");
    const error = await failure(
      caller().data.tail({ source: "local://x", resource: "r", aggregateId: "a" }),
    );
    expect(error.code).toBe("UNPROCESSABLE_CONTENT");
    expect((await caller().data.status()).available).toBe(false);
  });
});

describe("runs.resume", () => {
  it("refuses a run with nothing to resume (CONFLICT) and an unknown run (NOT_FOUND)", async () => {
    const sealed = await caller().runs.start({ skill: "skills/echo", inputs: { message: "x" } });
    const conflict = await failure(caller().runs.resume({ runId: sealed.runId }));
    expect(conflict.code).toBe("CONFLICT");
    expect(conflict.message).toMatch(/sealed and has nothing to resume/);
    const missing = await failure(caller().runs.resume({ runId: "run_console_0000000000000000" }));
    expect(missing.code).toBe("NOT_FOUND");
  });
});

describe("live updates across processes", () => {
  it("publishes status changes of a run the CLI started in another process", async () => {
    const watcher = watchRuns(fx.runtime, events, { intervalMs: 50 });
    const seen: RunEvent[] = [];
    const sub = (async () => {
      const stream = await caller().runs.onStatus();
      for await (const event of stream) {
        seen.push(event);
        if (event.status === "sealed") break;
      }
    })();
    try {
      const cli = await runx(fx.ws, ["skill", "skills/echo", "--message", "from cli", "--json"]);
      expect(cli.code).toBe(0);
      const runId = cli.json<{ run_id: string }>().run_id;
      await sub;
      expect(seen.at(-1)).toMatchObject({ runId, status: "sealed", skill: "echo" });
      expect(seen.filter((e) => e.status === "sealed")).toHaveLength(1);
    } finally {
      watcher.stop();
    }
  }, 30_000);
});
