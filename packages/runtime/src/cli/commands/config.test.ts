import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CommandContext } from "../context.js";
import { run } from "./config.js";

const KEY = "sk-cli-test-9c1e7a3b5d";

/** The parts of the command's JSON documents these tests read. */
interface CliDoc {
  entries?: unknown[];
  error?: { code: string; reason: string; message: string };
}

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "runx-config-cli-"));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

async function config(
  tokens: string[],
  stdin = "",
): Promise<{ code: number; out: string; err: string; json: () => CliDoc }> {
  let out = "";
  let err = "";
  const ctx: CommandContext = {
    env: {
      workspaceRoot: home,
      runxHome: home,
      receiptDir: undefined,
      stdoutIsTTY: false,
      stderrIsTTY: false,
      color: false,
      processEnv: {},
      workspace: { env: {}, fromDotenv: new Set() },
    },
    signal: new AbortController().signal,
    json: tokens.includes("--json") || tokens.includes("-j"),
    stdin: Readable.from([Buffer.from(stdin)]),
    out: (s) => (out += s),
    err: (s) => (err += s),
    status: () => undefined,
  };
  const code = await run(tokens, ctx);
  return { code, out, err, json: () => JSON.parse(out) as CliDoc };
}

describe("runx config", () => {
  it("sets the API key from stdin, trimming one trailing newline, and stores it with mode 0600", async () => {
    const r = await config(["set", "agent.api_key", "--from-stdin", "--json"], `${KEY}\n`);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ status: "ok", key: "agent.api_key", value: "********" });
    expect(r.out).not.toContain(KEY);
    const file = join(home, "config.json");
    expect(JSON.parse(readFileSync(file, "utf8")).agent.api_key).toBe(KEY);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("refuses a secret given on the command line with guidance and without echoing it", async () => {
    for (const tokens of [
      ["set", "api-key", KEY],
      ["set", "agent.api_key", `--${KEY}`],
    ]) {
      const r = await config([...tokens, "--json"]);
      expect(r.code).toBe(64);
      expect(r.json().error?.reason).toBe("USAGE");
      expect(r.json().error?.message).toContain("--from-stdin");
      expect(r.out + r.err).not.toContain(KEY);
    }
  });

  it("refuses an empty secret on stdin", async () => {
    const r = await config(["set", "api-key", "--from-stdin", "--json"], "\n");
    expect(r.code).toBe(1);
    expect(r.json().error?.reason).toBe("CONFIG_INVALID");
  });

  it("sets, gets and lists plain values by alias, masking the API key everywhere", async () => {
    expect((await config(["set", "provider", "openai"])).code).toBe(0);
    expect((await config(["set", "model", "gpt-5.1"])).code).toBe(0);
    await config(["set", "api-key", "--from-stdin"], KEY);
    expect((await config(["get", "agent.model"])).out).toBe("gpt-5.1\n");
    expect((await config(["get", "api-key", "--json"])).json()).toMatchObject({
      key: "agent.api_key",
      set: true,
      value: "********",
    });
    const list = await config(["list", "--json"]);
    expect(list.out).not.toContain(KEY);
    expect(list.json().entries).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: "agent.provider", set: true, value: "openai" }),
        expect.objectContaining({ key: "agent.base_url", set: false, value: null }),
        expect.objectContaining({ key: "agent.api_key", set: true, value: "********" }),
      ]),
    );
    const text = await config(["list"]);
    expect(text.out).toContain("agent.api_key    ********");
    expect(text.out).not.toContain(KEY);
  });

  it("reports an unknown key as CONFIG_INVALID and a missing action as USAGE", async () => {
    const unknown = await config(["set", "agent.temperature", "1", "--json"]);
    expect(unknown.code).toBe(1);
    expect(unknown.json().error).toMatchObject({ code: "config_error", reason: "CONFIG_INVALID" });
    expect((await config([])).code).toBe(64);
    expect((await config(["set", "model"])).code).toBe(64);
  });

  it("unsets a value", async () => {
    await config(["set", "model", "gpt-5.1"]);
    expect((await config(["unset", "model", "--json"])).json()).toMatchObject({ removed: true });
    expect((await config(["get", "model", "--json"])).json()).toMatchObject({ set: false });
  });
});
