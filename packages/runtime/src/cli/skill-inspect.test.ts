/**
 * `runx skill inspect` through the built CLI: the credential readiness report names the source
 * that would deliver the declared credential (stored profile via binding or default, process
 * environment, workspace `.env`) and never prints a value.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
});
afterEach(() => ws.cleanup());

const SECRET = "nsk_live_inspect_Zq81Lp";

function writeNitroSkill(): void {
  ws.write("skills/nitro/SKILL.md", "---\nname: nitro\ndescription: Calls the nitro API.\n---\n");
  ws.write(
    "skills/nitro/X.yaml",
    [
      "credentials:",
      "  nitro:",
      "    provider: nitrosend",
      "    audience: https://api.nitrosend.com",
      "    auth:",
      "      api_key:",
      "        delivery:",
      "          env: NITRO_KEY",
      "runners:",
      "  default:",
      "    type: cli-tool",
      "    command: sh",
      "    args: [-c, 'echo {}']",
      "    credential: nitro",
      "    environment:",
      "      required: [NITRO_REGION]",
      "    inputs:",
      "      message:",
      "        type: string",
      "        required: true",
      "",
    ].join("\n"),
  );
}

describe("runx skill inspect", () => {
  it("reports a missing credential with its setup commands and readiness needs_credential", async () => {
    writeNitroSkill();
    const result = await runx(ws, ["skill", "inspect", "skills/nitro", "--json"], {
      env: { NITRO_REGION: "eu" },
    });
    expect(result.code).toBe(0);
    const report = result.json<{ credential: { setup: string[]; source?: string } }>();
    expect(report).toMatchObject({
      schema: "runx.skill.inspect.v1",
      status: "ok",
      name: "nitro",
      runner: { name: "default", type: "cli-tool" },
      readiness: { status: "needs_credential" },
      environment: {
        status: "ready",
        variables: [{ name: "NITRO_REGION", required: true, available: true }],
      },
      credential: {
        name: "nitro",
        provider: "nitrosend",
        audience: "https://api.nitrosend.com",
        auth: { api_key: { delivery: { env: "NITRO_KEY" } } },
        status: "missing",
      },
    });
    expect(report.credential.setup[0]).toContain("runx credential set nitrosend");
    expect(report.credential.source).toBeUndefined();

    const human = await runx(ws, ["skill", "inspect", "skills/nitro"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("readiness: needs_credential");
    expect(human.stdout).toContain("credential: nitro (nitrosend) missing");
    expect(human.stdout).toContain("environment: NITRO_REGION (required, missing)");
  });

  it("names the process environment, the workspace .env and stored profiles as sources, never the value", async () => {
    writeNitroSkill();
    const fromProcess = await runx(ws, ["skill", "inspect", "skills/nitro", "--json"], {
      env: { NITRO_KEY: SECRET, NITRO_REGION: "eu" },
    });
    expect(fromProcess.code).toBe(0);
    expect(fromProcess.stdout).not.toContain(SECRET);
    expect(fromProcess.json()).toMatchObject({
      readiness: { status: "ready" },
      credential: {
        status: "ready",
        source: "environment",
        origin: "process",
        auth_mode: "api_key",
        delivery: { env: "NITRO_KEY" },
      },
    });

    ws.write(".env", `NITRO_KEY=${SECRET}\n`);
    const fromDotenv = await runx(ws, ["skill", "inspect", "skills/nitro"]);
    expect(fromDotenv.code).toBe(0);
    expect(fromDotenv.stdout).not.toContain(SECRET);
    expect(fromDotenv.stdout).toContain(
      "credential: nitro (nitrosend) ready via environment (workspace .env), delivered as NITRO_KEY (api_key)",
    );

    const set = await runx(
      ws,
      ["credential", "set", "nitrosend", "--profile", "acct", "--from-stdin"],
      {
        stdin: `${SECRET}-stored\n`,
      },
    );
    expect(set.code).toBe(0);
    // The stored default outranks the environment, as it does for a run.
    const stored = await runx(ws, ["skill", "inspect", "skills/nitro", "--json"]);
    expect(stored.stdout).not.toContain(SECRET);
    expect(stored.json().credential).toMatchObject({
      status: "ready",
      source: "global_default",
      profile: "acct",
    });
    const bound = await runx(ws, [
      "credential",
      "bind",
      "acct",
      "--skill",
      "nitro",
      "--credential",
      "nitro",
    ]);
    expect(bound.code).toBe(0);
    const viaBinding = await runx(ws, ["skill", "inspect", "skills/nitro", "--json"]);
    expect(viaBinding.json().credential).toMatchObject({
      source: "project_binding",
      profile: "acct",
    });
  });

  it("fails with the resolver's code when --profile names no stored profile", async () => {
    writeNitroSkill();
    const result = await runx(ws, [
      "skill",
      "inspect",
      "skills/nitro",
      "--profile",
      "nope",
      "--json",
    ]);
    expect(result.code).toBe(1);
    expect(result.json()).toMatchObject({
      status: "failure",
      error: { reason: "CREDENTIAL_PROFILE_NOT_FOUND" },
    });
  });
});
