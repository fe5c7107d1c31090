/**
 * Runner start failures against every entry point: a skill whose runner cannot start (missing
 * command, a `cwd` outside the workspace, a missing or directory javascript module, an
 * environment too large for execve) is a failed run with a sealed receipt and a clear message;
 * a limit the package breaks (`timeout_seconds` past the maximum, a NUL byte in `command`) is
 * refused at package load with the field named. Neither ever takes down the API process, and a
 * run a restart recovered resumes into the same sealed failure.
 */
import { chmodSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { data, mutate, query, runx, startApiProcess } from "./kit.js";
import type { ApiProcess, Session, Workspace } from "./kit.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { cleanEnv, pollUntil, RUNX_BIN } from "../packages/runtime/src/testing/cli.js";

/** A workspace skill `skills/<name>` with one default runner (the YAML lines under it). */
function skill(ws: Workspace, name: string, runner: string[]): void {
  ws.write(`skills/${name}/SKILL.md`, `---\nname: ${name}\ndescription: ${name}\n---\n# ${name}\n`);
  ws.write(
    `skills/${name}/X.yaml`,
    [
      `skill: ${name}`,
      'version: "0.1.0"',
      "runners:",
      "  default:",
      "    default: true",
      ...runner.map((line) => `    ${line}`),
      "",
    ].join("\n"),
  );
}

/** One value larger than the kernel's limit on a single environment string (128 KiB). */
const HUGE = "x".repeat(200 * 1024);

/** Skills whose runner cannot start; each must seal a failed/blocked receipt. */
const UNSTARTABLE: Record<string, { runner: string[]; disposition: string; message: RegExp }> = {
  nocmd: {
    runner: ["type: cli-tool", "command: no-such-cmd-xyz"],
    disposition: "failed",
    message: /cannot start no-such-cmd-xyz: command not found/,
  },
  outsidecwd: {
    runner: ["type: cli-tool", "command: pwd", "cwd: ../../.."],
    disposition: "blocked",
    message: /cwd resolves outside the package and the workspace/,
  },
  nomodule: {
    runner: ["type: javascript", "module: missing.mjs"],
    disposition: "blocked",
    message: /javascript module missing\.mjs does not exist/,
  },
  dirmodule: {
    runner: ["type: javascript", "module: dir.mjs"],
    disposition: "blocked",
    message: /javascript module dir\.mjs is not a file/,
  },
  hugeenv: {
    runner: ["type: cli-tool", 'command: "true"', "env:", `  BIG: ${HUGE}`],
    disposition: "failed",
    message: /cannot start true: .*too large/,
  },
};

/** Skills the package loader refuses, naming the field. */
const REFUSED: Record<string, { runner: string[]; field: RegExp }> = {
  longtimeout: {
    runner: ["type: cli-tool", 'command: "true"', "timeout_seconds: 99999"],
    field: /timeout_seconds/,
  },
  nulcommand: {
    runner: ["type: cli-tool", 'command: "tr\\0ue"'],
    field: /command/,
  },
};

function prepare(ws: Workspace): void {
  for (const [name, c] of Object.entries(UNSTARTABLE)) skill(ws, name, c.runner);
  for (const [name, c] of Object.entries(REFUSED)) skill(ws, name, c.runner);
  ws.write("skills/dirmodule/dir.mjs/index.js", "export default () => ({});\n");
  // A tool outside the package that the restart test removes while its run is cut off (the
  // package itself, and so its digest, stays the same).
  ws.write("../bin/slowtool", "#!/bin/sh\nexec sleep 30\n");
  chmodSync(join(ws.root, "..", "bin", "slowtool"), 0o755);
  skill(ws, "slow", ["type: cli-tool", "command: ../../../bin/slowtool", "timeout_seconds: 60"]);
}

interface Envelope {
  status: string;
  run_id: string;
  receipt_id: string | null;
  closure?: { disposition: string; reason_code: string; summary: string };
}
interface Detail {
  run: { id: string; status: string; disposition: string | null; receiptId: string | null };
  receipts: Array<{ receiptId: string; disposition: string }>;
  pendingRequests: Array<{ id: string }>;
}

async function me(api: ApiProcess, session: Session): Promise<string> {
  const answer = await query(api.url, "auth.me", undefined, api.headers(session));
  return data<{ username: string }>(answer).username;
}

describe("runner start failures through the API process", () => {
  let api: ApiProcess;
  let approver: Session;

  beforeAll(async () => {
    api = await startApiProcess({ prepare });
    approver = await api.operator("ann", "approver");
  }, 120_000);
  afterAll(async () => {
    await api.cleanup();
  });

  for (const [name, c] of Object.entries(UNSTARTABLE)) {
    it(`${name}: a sealed ${c.disposition} run, and the API still answers`, async () => {
      const started = await mutate(
        api.url,
        "runs.start",
        { skill: name, inputs: {} },
        api.headers(approver),
      );
      expect(api.alive(), api.log.join("\n")).toBe(true);
      expect(started.status, JSON.stringify(started.body)).not.toBe(500);
      expect(await me(api, approver)).toBe("ann");
      const list = data<{ items: Array<{ id: string }> }>(
        await query(api.url, "runs.list", { skill: name }, api.headers(approver)),
      );
      expect(list.items, JSON.stringify(started.body)).toHaveLength(1);
      const detail = data<Detail>(
        await query(api.url, "runs.get", { runId: list.items[0]!.id }, api.headers(approver)),
      );
      expect(detail.run.receiptId).not.toBeNull();
      expect(detail.run.disposition).toBe(c.disposition);
      expect(detail.receipts.map((r) => r.disposition)).toEqual([c.disposition]);
      expect(JSON.stringify(started.body)).toMatch(c.message);
    });
  }

  for (const [name, c] of Object.entries(REFUSED)) {
    it(`${name}: refused at package load, naming the field`, async () => {
      const started = await mutate(
        api.url,
        "runs.start",
        { skill: name, inputs: {} },
        api.headers(approver),
      );
      expect(api.alive(), api.log.join("\n")).toBe(true);
      expect(started.status, JSON.stringify(started.body)).toBeGreaterThanOrEqual(400);
      expect(started.status).toBeLessThan(500);
      const error = (started.body as { error: { message: string; data: { reason?: string } } })
        .error;
      expect(error.message).toMatch(c.field);
      expect(await me(api, approver)).toBe("ann");
    });
  }

  it("a run a restart cut off resumes into a sealed failure when its command is gone", async () => {
    const started = data<{ runId: string; state: string }>(
      await mutate(api.url, "runs.start", { skill: "slow", inputs: {} }, api.headers(approver)),
    );
    expect(started.state).toBe("running");
    // The API dies mid-run (as it did when a worker's error took it down) ...
    api.child.kill("SIGKILL");
    await pollUntil(() => !api.alive(), { what: "the API to die" });
    // ... and the command the run needs is gone by the time it is resumed.
    rmSync(join(api.ws.root, "..", "bin", "slowtool"));
    await api.restart();
    approver = await api.operator("ann2", "approver");
    const paused = data<Detail>(
      await query(api.url, "runs.get", { runId: started.runId }, api.headers(approver)),
    );
    expect(paused.run.status).toBe("needs_agent");
    expect(paused.pendingRequests.map((r) => r.id)).toEqual(["interrupted"]);

    const resumed = await mutate(
      api.url,
      "runs.resume",
      { runId: started.runId },
      api.headers(approver),
    );
    expect(api.alive(), api.log.join("\n")).toBe(true);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    const result = data<{ state: string; envelope?: Envelope }>(resumed);
    expect(result.envelope?.closure).toMatchObject({
      disposition: "failed",
      reason_code: "process_failed",
    });
    expect(result.envelope?.closure?.summary).toMatch(
      /cannot start \.\.\/\.\.\/\.\.\/bin\/slowtool: command not found/,
    );
    expect(await me(api, approver)).toBe("ann2");
  }, 60_000);
});

describe("runner start failures through the built CLI", () => {
  let ws: Workspace;
  beforeAll(async () => {
    const { makeWorkspace } = await import("./kit.js");
    ws = makeWorkspace("runx-sec-cli-");
    prepare(ws);
  });
  afterAll(() => ws.cleanup());

  for (const [name, c] of Object.entries(UNSTARTABLE)) {
    it(`${name}: a JSON answer with the sealed receipt, no stack trace`, async () => {
      const r = await runx(ws, ["skill", `skills/${name}`, "--json"]);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.code).not.toBe(0);
      expect(r.stdout.trim()).not.toBe("");
      const out = r.json<{
        status: string;
        receipt_id?: string;
        error?: { receipt_id?: string };
      }>();
      expect(JSON.stringify(out)).toMatch(c.message);
      const receiptId = out.receipt_id ?? out.error?.receipt_id;
      expect(typeof receiptId).toBe("string");
      const shown = await runx(ws, ["history", "--detail", receiptId!, "--json"]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(shown.stdout).toContain(c.disposition);
    });
  }

  for (const [name, c] of Object.entries(REFUSED)) {
    it(`${name}: refused at package load, naming the field`, async () => {
      const r = await runx(ws, ["skill", `skills/${name}`, "--json"]);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      const out = r.json<{
        status: string;
        error: { reason: string; message: string; path?: string };
      }>();
      expect(out.status).toBe("failure");
      expect(out.error.reason).toBe("PROFILE_INVALID");
      expect(`${out.error.message} ${out.error.path ?? ""}`).toMatch(c.field);
    });
  }
});

describe("runner start failures through MCP (runx mcp serve over stdio)", () => {
  let ws: Workspace;
  beforeAll(async () => {
    const { makeWorkspace } = await import("./kit.js");
    ws = makeWorkspace("runx-sec-mcp-");
    prepare(ws);
  });
  afterAll(() => ws.cleanup());

  it("each unstartable skill answers a sealed failure and the server keeps serving", async () => {
    const names = Object.keys(UNSTARTABLE);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [RUNX_BIN, "mcp", "serve", ...names.map((n) => `skills/${n}`)],
      env: cleanEnv(ws),
      cwd: ws.root,
      stderr: "pipe",
    });
    const client = new Client({ name: "runx-security", version: "0.0.0" });
    await client.connect(transport);
    try {
      for (const name of names) {
        const called = await client.callTool({ name, arguments: {} });
        expect(JSON.stringify(called), name).toMatch(UNSTARTABLE[name]!.message);
        expect(JSON.stringify(called), name).toMatch(/sha256:[0-9a-f]{64}/);
      }
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(names.sort());
    } finally {
      await client.close();
    }
  }, 60_000);
});
