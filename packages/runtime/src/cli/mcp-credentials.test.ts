/**
 * `runx mcp serve` checks the served skills' declared credentials at start-up, through the
 * built CLI: a missing one refuses the start with its setup command; a satisfied one serves,
 * and its call receives the material without it appearing in the result.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanEnv, makeWorkspace, RUNX_BIN, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-mcp-cred-");
  ws.addBundledSkill("echo");
  ws.write("skills/nitro/SKILL.md", "---\nname: nitro\ndescription: Calls the nitro API.\n---\n");
  ws.write(
    "skills/nitro/X.yaml",
    [
      "credentials:",
      "  nitro:",
      "    provider: nitrosend",
      "    auth:",
      "      api_key:",
      "        delivery:",
      "          env: NITRO_KEY",
      "runners:",
      "  default:",
      "    type: cli-tool",
      "    command: sh",
      '    args: [-c, \'printf "{\\"key_length\\":%s}" "${#NITRO_KEY}"\']',
      "    credential: nitro",
      "",
    ].join("\n"),
  );
});
afterEach(() => ws.cleanup());

const SECRET = "nsk_live_mcp_Pw93Kd";

describe("runx mcp serve credential start-up check", () => {
  it("refuses to start while a served skill's declared credential is missing", async () => {
    const result = await runx(ws, ["mcp", "serve", "skills/echo", "skills/nitro"], {
      stdin: "",
      timeoutMs: 15_000,
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(
      "skill nitro (runner default) needs credential 'nitro' for provider 'nitrosend'",
    );
    expect(result.stderr).toContain(
      "setup: printf '%s' \"$NITRO_KEY\" | runx credential set nitrosend",
    );
    expect(result.stderr).not.toContain("runx MCP serving");
  });

  it("serves once the credential resolves, delivering it to the call only", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [RUNX_BIN, "mcp", "serve", "skills/echo", "skills/nitro"],
      env: cleanEnv(ws, { NITRO_KEY: SECRET }),
      cwd: ws.root,
      stderr: "pipe",
    });
    const client = new Client({ name: "runx-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((t) => t.name)).toEqual(["echo", "nitro"]);
      const called = await client.callTool({ name: "nitro", arguments: {} });
      expect(called.isError).toBe(false);
      const structured = called.structuredContent as { output: unknown };
      expect(structured.output).toEqual({ key_length: SECRET.length });
      expect(JSON.stringify(called)).not.toContain(SECRET);
    } finally {
      await client.close();
    }
  });
});
