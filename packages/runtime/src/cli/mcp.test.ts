import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanEnv, makeWorkspace, pollUntil, RUNX_BIN, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
const children: ChildProcess[] = [];

beforeEach(() => {
  ws = makeWorkspace("runx-mcp-");
  ws.addBundledSkill("echo");
  ws.write(
    "skills/gate/SKILL.md",
    "---\nname: gate\ndescription: Waits for a human decision before it closes.\n---\nA gate.\n",
  );
  ws.write(
    "skills/gate/X.yaml",
    [
      "runners:",
      "  default:",
      "    default: true",
      "    type: graph",
      "    graph:",
      "      name: gate",
      "      result_from: [decide]",
      "      steps:",
      "        - id: decide",
      "          run:",
      "            type: approval",
      "          inputs:",
      "            gate_id: release-gate",
      "            reason: Release the build.",
      "          artifacts:",
      "            wrap_as: approval",
      "",
    ].join("\n"),
  );
});
afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.pid !== undefined) child.kill("SIGKILL");
  }
  ws.cleanup();
});

interface Envelope {
  status: string;
  run_id: string;
  receipt_id: string | null;
  result: unknown;
  requests: Array<{ id: string; kind: string }>;
  request_digests?: Record<string, string>;
}

async function exercise(client: Client): Promise<void> {
  const listed = await client.listTools();
  expect(listed.tools.map((t) => t.name)).toEqual(["echo", "gate"]);
  const echo = listed.tools[0]!;
  expect(echo.inputSchema).toMatchObject({
    type: "object",
    properties: { message: { type: "string" } },
    required: ["message"],
  });
  expect(echo.description).toContain("Echo the input object");

  const called = await client.callTool({ name: "echo", arguments: { message: "hi" } });
  expect(called.isError).toBe(false);
  const structured = called.structuredContent as { runx: Envelope; output: unknown };
  expect(structured.runx.status).toBe("sealed");
  expect(structured.output).toEqual({ message: "hi" });
  const receiptId = structured.runx.receipt_id!;
  expect(receiptId).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect(existsSync(join(ws.root, ".runx/receipts", `sha256-${receiptId.slice(7)}.json`))).toBe(
    true,
  );

  const gated = await client.callTool({ name: "gate", arguments: {} });
  expect(gated.isError).toBe(false);
  const paused = (gated.structuredContent as { runx: Envelope }).runx;
  expect(paused.status).toBe("needs_approval");
  expect(paused.requests).toEqual([expect.objectContaining({ kind: "approval" })]);
  expect(Object.keys(paused.request_digests ?? {})).toEqual([paused.requests[0]!.id]);
  const text = (gated.content as Array<{ text: string }>)[0]!.text;
  expect(text).toContain(`runx resume ${paused.run_id}`);
  expect(text).toContain("cannot be resolved through MCP");

  // Nothing offered through MCP resolves the gate: arguments are inputs, checked strictly.
  const smuggled = client.callTool({
    name: "gate",
    arguments: { approvals: { "release-gate": true } },
  });
  await expect(smuggled).rejects.toMatchObject({ code: ErrorCode.InvalidParams });

  for (const args of [{ message: 5 }, { message: "x", extra: 1 }, {}]) {
    const bad = client.callTool({ name: "echo", arguments: args });
    await expect(bad).rejects.toBeInstanceOf(McpError);
    await expect(bad).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  }
  await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toMatchObject({
    code: ErrorCode.MethodNotFound,
  });

  // The paused run is a real run: history lists it and a human resume still works.
  const history = await runx(ws, ["history", "--json"]);
  expect(history.stdout).toContain(paused.run_id);
}

describe("runx mcp serve", () => {
  it("serves skills over stdio to the SDK client", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [RUNX_BIN, "mcp", "serve", "skills/echo", "skills/gate"],
      env: cleanEnv(ws),
      cwd: ws.root,
      stderr: "pipe",
    });
    const client = new Client({ name: "runx-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe("runx-cli");
      await exercise(client);
    } finally {
      await client.close();
    }
  }, 60_000);

  it("serves skills over streamable HTTP on loopback with a bearer token", async () => {
    const child = spawn(
      process.execPath,
      [RUNX_BIN, "mcp", "serve", "skills/echo", "skills/gate", "--http", "--port", "0"],
      { cwd: ws.root, env: cleanEnv(ws), stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(child);
    let stderr = "";
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString("utf8")));
    const [url, token] = await pollUntil(
      () => {
        const listening = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1];
        const bearer = /requires: Authorization: Bearer (\S+)/.exec(stderr)?.[1];
        return listening !== undefined && bearer !== undefined ? [listening, bearer] : undefined;
      },
      { timeoutMs: 15_000, what: "the MCP HTTP server" },
    );

    const denied = await fetch(url, { method: "POST", body: "{}" });
    expect(denied.status).toBe(401);

    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: "runx-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("close", resolve));
  }, 60_000);

  it("refuses a non-loopback host, no skills, and packages without X.yaml", async () => {
    const none = await runx(ws, ["mcp", "serve"]);
    expect(none.code).toBe(64);
    expect(none.stderr).toContain("requires at least one skill reference");
    const open = await runx(ws, ["mcp", "serve", "skills/echo", "--http", "--host", "0.0.0.0"]);
    expect(open.code).toBe(64);
    expect(open.stderr).toContain("non-loopback");
    ws.write("skills/portable/SKILL.md", "---\nname: portable\n---\nJust prose.\n");
    const portable = await runx(ws, ["mcp", "serve", "skills/portable"]);
    expect(portable.code).toBe(1);
    expect(portable.stderr).toContain("does not declare X.yaml runners");
  });
});
