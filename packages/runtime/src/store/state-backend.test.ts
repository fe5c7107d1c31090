import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRuntime } from "../create-runtime.js";
import type { Runtime } from "../create-runtime.js";
import { RuntimeError } from "../errors.js";
import { stateBackendFromEnv } from "./state-backend.js";
import { scratchPgState } from "./pg/test-kit.js";
import type { ScratchPgState } from "./pg/test-kit.js";

const dirs: string[] = [];
const runtimes: Runtime[] = [];
afterEach(() => {
  for (const r of runtimes.splice(0)) r.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function runtimeWith(env: Record<string, string | undefined>): Runtime {
  const ws = mkdtempSync(join(tmpdir(), "runx-backend-"));
  dirs.push(ws);
  const runtime = createRuntime({
    workspaceRoot: ws,
    runxHome: join(ws, "home"),
    env: { PATH: process.env.PATH, ...env },
  });
  runtimes.push(runtime);
  return runtime;
}

function refusal(fn: () => unknown): RuntimeError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RuntimeError) return err;
    throw err;
  }
  throw new Error("expected a RuntimeError");
}

const PASSWORD = "correct horse battery";

describe("RUNX_STATE_URL", () => {
  it("unset or blank keeps the embedded SQLite store", () => {
    expect(stateBackendFromEnv({})).toEqual({ kind: "sqlite" });
    expect(stateBackendFromEnv({ RUNX_STATE_URL: "  " })).toEqual({ kind: "sqlite" });
    expect(runtimeWith({}).stateBackend).toEqual({ kind: "sqlite" });
  });

  it("refuses an unusable URL when the runtime is built, naming the variable and never the secret", () => {
    const cases: Array<[string, RegExp]> = [
      ["not a url", /RUNX_STATE_URL is not a URL/],
      ["mysql://db:3306/runx", /must start with postgres:\/\//],
      ["postgres://runx:hunter2-secret@db:5432/runx", /must not contain a password/],
      ["postgres://db:5432/", /must name one database/],
    ];
    for (const [url, message] of cases) {
      const err = refusal(() => runtimeWith({ RUNX_STATE_URL: url }));
      expect(err.code).toBe("CONFIG_INVALID");
      expect(err.message).toMatch(message);
      expect(JSON.stringify({ message: err.message, details: err.details })).not.toContain(
        "hunter2",
      );
    }
  });

  it("fails ready() in one line naming the store when the database cannot be reached", async () => {
    const runtime = runtimeWith({ RUNX_STATE_URL: "postgres://runx@127.0.0.1:1/runx" });
    expect(runtime.stateBackend).toMatchObject({
      kind: "postgres",
      label: "postgres://127.0.0.1:1/runx",
    });
    await expect(runtime.ready()).rejects.toMatchObject({
      code: "STORE_ERROR",
      message: expect.stringMatching(/^postgres:\/\/127\.0\.0\.1:1\/runx: open failed/) as unknown,
    });
  });
});

describe("two runtimes on one PostgreSQL database", () => {
  let scratch: ScratchPgState;
  beforeAll(async () => {
    scratch = await scratchPgState();
  }, 60_000);
  afterAll(async () => {
    await scratch.drop();
  }, 60_000);

  it("share operators, sessions and tokens; the console's run services are refused, not written to a local file", async () => {
    const a = runtimeWith({ RUNX_STATE_URL: scratch.url });
    const b = runtimeWith({ RUNX_STATE_URL: scratch.url });
    await Promise.all([a.ready(), b.ready()]);

    // Bootstrap: each instance issues a token; of two concurrent redemptions exactly one
    // creates the admin, and neither token works afterwards.
    const [ta, tb] = await Promise.all([
      a.console.operators.bootstrapToken(),
      b.console.operators.bootstrapToken(),
    ]);
    expect(ta).toEqual(expect.any(String));
    expect(tb).toEqual(expect.any(String));
    expect(tb).not.toBe(ta);
    const raced = await Promise.allSettled([
      a.console.operators.redeemBootstrap({ token: ta!, username: "ann", password: PASSWORD }),
      b.console.operators.redeemBootstrap({ token: tb!, username: "ben", password: PASSWORD }),
    ]);
    expect(raced.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const loser = raced.find((r) => r.status === "rejected");
    expect((loser?.reason as RuntimeError).code).toBe("UNAUTHENTICATED");
    expect(await a.console.operators.count()).toBe(1);
    expect(await b.console.operators.bootstrapToken()).toBeNull();

    const admin = (await b.console.operators.list())[0]!;
    expect(admin.role).toBe("admin");
    const signedIn = await a.console.operators.authenticate(admin.username, PASSWORD);
    expect(signedIn.id).toBe(admin.id);

    // A session opened on one instance is live on the other, and ends on both.
    const session = await a.console.operators.openSession(admin.id, 3600);
    expect((await b.console.operators.sessionOperator(session.id, admin.id)).id).toBe(admin.id);
    await b.console.operators.closeSession(session.id);
    await expect(a.console.operators.sessionOperator(session.id, admin.id)).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
    });

    // A token created on one instance authenticates on the other until it is revoked there.
    const viewer = await a.console.operators.add({
      username: "vic",
      role: "viewer",
      password: PASSWORD,
    });
    const token = await b.console.operators.createToken(viewer.id, "ci");
    expect((await a.console.operators.authenticateToken(token.token)).username).toBe("vic");
    await a.console.operators.setDisabled("vic", true);
    await expect(b.console.operators.authenticateToken(token.token)).rejects.toMatchObject({
      code: "UNAUTHENTICATED",
    });

    // Run execution and the readers use the async port over the shared database (no runs
    // there yet); the console's run services still read SQLite: refused with a clear reason,
    // and no local state file.
    expect(await a.pending()).toEqual([]);
    await expect(a.historyDetail("run_default_0000000000000001")).rejects.toMatchObject({
      code: "RUN_NOT_FOUND",
    });
    await expect(
      a.resumeWith({ runId: "run_default_0000000000000001", document: {} }),
    ).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    let refused: RuntimeError | undefined;
    try {
      a.console.runs.detail("run_default_0000000000000001");
    } catch (error) {
      refused = error as RuntimeError;
    }
    expect(refused?.code).toBe("STORE_ERROR");
    expect(refused?.details).toMatchObject({ reason: "not_on_postgres" });
    expect(refused?.message).toMatch(/unset RUNX_STATE_URL to use \.runx\/state\.sqlite/);
    // The harness is refused before any case runs (its cases would write into the database).
    await expect(a.harness({ targets: ["skills/none"] })).rejects.toMatchObject({
      code: "STORE_ERROR",
      details: { reason: "not_on_postgres" },
    });
    expect(existsSync(a.paths.stateDb)).toBe(false);
    expect(existsSync(b.paths.stateDb)).toBe(false);
  }, 60_000);
});
