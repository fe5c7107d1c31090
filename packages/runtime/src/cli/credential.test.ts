import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
});
afterEach(() => ws.cleanup());

const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

/** Every byte under a directory (recursively), as latin1 text. */
function bytesUnder(dir: string): string {
  if (!existsSync(dir)) return "";
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const file = join(d, name);
      if (statSync(file).isDirectory()) walk(file);
      else out.push(readFileSync(file).toString("latin1"));
    }
  };
  walk(dir);
  return out.join("\n");
}

const HOME = (): string => join(ws.home, ".runx");

function setProfile(
  provider: string,
  profile: string,
  secret: string,
  extra: string[] = [],
): ReturnType<typeof runx> {
  return runx(ws, ["credential", "set", provider, "--profile", profile, ...extra, "--from-stdin"], {
    stdin: `${secret}\n`,
  });
}

/**
 * A skill whose runner declares the `nitro` credential (delivered as NITRO_KEY). It prints
 * the names of its environment, the token itself (which must be scrubbed) and a digest of
 * the token (which is not, so the test can tell which material arrived).
 */
function writeNitroSkill(extraCredentials = ""): void {
  ws.write("skills/nitro/SKILL.md", "---\nname: nitro\n---\nCalls the nitro API.\n");
  ws.write(
    "skills/nitro/probe.sh",
    [
      "touch ../../spawned.txt",
      'digest=$(printf %s "$NITRO_KEY" | sha256sum | cut -c1-64)',
      "names=$(env | cut -d= -f1 | sort | tr '\\n' ' ')",
      'printf \'{"token":"%s","digest":"%s","names":"%s"}\' "$NITRO_KEY" "$digest" "$names"',
      'echo "stderr sees $NITRO_KEY" >&2',
      "",
    ].join("\n"),
  );
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
      extraCredentials,
      "runners:",
      "  default:",
      "    type: cli-tool",
      "    command: sh",
      "    args: [./probe.sh]",
      "    credential: nitro",
      "",
    ].join("\n"),
  );
}

interface ProbeResult {
  token: string;
  digest: string;
  names: string;
}

describe("runx credential", () => {
  const SECRET = "nsk_live_Q7wE4rT9yU2iO5pA";

  it("sets, lists, binds and removes a profile without ever showing the material", async () => {
    const set = await setProfile("nitrosend", "account-one", SECRET, ["--json"]);
    expect(set.code).toBe(0);
    expect(set.json()).toEqual({
      status: "ok",
      action: "set",
      profile: {
        name: "account-one",
        provider: "nitrosend",
        auth_mode: "api_key",
        is_default: true,
      },
    });
    const human = await setProfile("n8n", "workflow", "n8n-token-Xy12Ab34", [
      "--auth-mode",
      "bearer",
      "--audience",
      "https://n8n.example.com",
    ]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("stored credential profile workflow (n8n, bearer)");

    const list = await runx(ws, ["credential", "list", "--json"]);
    expect(list.code).toBe(0);
    expect(list.json()).toEqual({
      profiles: [
        { name: "account-one", provider: "nitrosend", auth_mode: "api_key", is_default: true },
        {
          name: "workflow",
          provider: "n8n",
          auth_mode: "bearer",
          audience: "https://n8n.example.com",
          is_default: true,
        },
      ],
    });
    const text = await runx(ws, ["credential", "list"]);
    expect(text.stdout).toMatch(/account-one\s+nitrosend\s+api_key \(default\)/);

    // Storage: config.json and key files are 0600, the keys directory 0700, no plaintext.
    expect(statSync(join(HOME(), "config.json")).mode & 0o777).toBe(0o600);
    expect(statSync(join(HOME(), "keys")).mode & 0o777).toBe(0o700);
    const keyFiles = readdirSync(join(HOME(), "keys"));
    expect(keyFiles.length).toBeGreaterThanOrEqual(3);
    for (const f of keyFiles) expect(statSync(join(HOME(), "keys", f)).mode & 0o777).toBe(0o600);
    const config = JSON.parse(readFileSync(join(HOME(), "config.json"), "utf8"));
    expect(config.credentials.defaults).toEqual({ nitrosend: "account-one", n8n: "workflow" });
    expect(config.credentials.profiles["account-one"].secret_ref).toMatch(/^cred_[0-9a-f]{32}$/);

    const bind = await runx(ws, ["credential", "bind", "account-one", "--provider", "nitrosend"]);
    expect(bind.code).toBe(0);
    const bindSkill = await runx(ws, [
      "credential",
      "bind",
      "workflow",
      "--skill",
      "handoff",
      "--credential",
      "n8n",
      "--json",
    ]);
    expect(bindSkill.json()).toMatchObject({ target: "skill:handoff:n8n", profile: "workflow" });
    expect(JSON.parse(ws.read(".runx/credentials.json"))).toEqual({
      bindings: { "provider:nitrosend": "account-one", "skill:handoff:n8n": "workflow" },
    });
    const unknown = await runx(ws, ["credential", "bind", "nobody", "--provider", "x", "--json"]);
    expect(unknown.code).toBe(1);
    expect(unknown.json().error).toMatchObject({ reason: "CREDENTIAL_PROFILE_NOT_FOUND" });

    const removed = await runx(ws, ["credential", "remove", "account-one", "--json"]);
    expect(removed.json()).toEqual({
      status: "ok",
      action: "remove",
      profile: "account-one",
      removed: true,
    });
    const after = await runx(ws, ["credential", "list", "--json"]);
    expect(after.json<{ profiles: Array<{ name: string }> }>().profiles.map((p) => p.name)).toEqual(
      ["workflow"],
    );
    expect(
      JSON.parse(readFileSync(join(HOME(), "config.json"), "utf8")).credentials.defaults,
    ).toEqual({ n8n: "workflow" });
    expect(readdirSync(join(HOME(), "keys")).length).toBe(keyFiles.length - 1);

    for (const r of [set, human, list, text, bind, bindSkill, unknown, removed, after]) {
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      expect(r.stdout + r.stderr).not.toContain("n8n-token-Xy12Ab34");
    }
    const stored = bytesUnder(HOME()) + bytesUnder(join(ws.root, ".runx"));
    expect(stored).not.toContain(SECRET);
    expect(stored).not.toContain("n8n-token-Xy12Ab34");
  });

  it("refuses material on argv without repeating it, and refuses unknown flags with exit 64", async () => {
    const argv = await runx(ws, ["credential", "set", "nitrosend", "--profile", "p", SECRET]);
    expect(argv.code).toBe(64);
    expect(argv.stderr).toContain("pipe it on stdin");
    expect(argv.stdout + argv.stderr).not.toContain(SECRET);
    const asFlag = await runx(ws, [
      "credential",
      "set",
      "nitrosend",
      `--token=${SECRET}`,
      "--json",
    ]);
    expect(asFlag.code).toBe(64);
    expect(asFlag.stdout + asFlag.stderr).not.toContain(SECRET);
    const noStdin = await runx(ws, ["credential", "set", "nitrosend", "--profile", "p"], {
      stdin: SECRET,
    });
    expect(noStdin.code).toBe(64);
    expect(noStdin.stderr).toContain("--from-stdin");
    const empty = await runx(ws, ["credential", "set", "x", "--profile", "p", "--from-stdin"], {
      stdin: "\n",
    });
    expect(empty.code).toBe(64);
    const badAudience = await setProfile("x", "p", SECRET, ["--audience", "http://plain.example"]);
    expect(badAudience.code).toBe(64);
    expect(badAudience.stdout + badAudience.stderr).not.toContain(SECRET);
    expect(existsSync(join(HOME(), "config.json"))).toBe(false);
    const listFlag = await runx(ws, ["credential", "list", "--bogus"]);
    expect(listFlag.code).toBe(64);
    const action = await runx(ws, ["credential", "frobnicate"]);
    expect(action.code).toBe(64);
    const help = await runx(ws, ["credential", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("runx credential set <provider> --profile <name>");
    const top = await runx(ws, ["--help"]);
    expect(top.stdout).toContain("credential");
  });
});

describe("skill credentials", () => {
  const PROFILE_SECRET = "prof_secret_A1b2C3d4E5";
  const OTHER_SECRET = "other_secret_F6g7H8i9J0";
  const DEFAULT_SECRET = "default_secret_K1l2M3n4";
  const ENV_SECRET = "env_secret_O5p6Q7r8S9";
  const DOTENV_SECRET = "dotenv_secret_T1u2V3w4X5";

  beforeEach(() => writeNitroSkill());

  async function probe(
    args: string[] = [],
    env: Record<string, string> = {},
  ): Promise<{ r: Awaited<ReturnType<typeof runx>>; out: ProbeResult }> {
    const r = await runx(ws, ["skill", "skills/nitro", ...args, "--json"], { env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    return { r, out: r.json<{ result: ProbeResult }>().result };
  }

  it("returns needs_credential with the setup command before any process starts", async () => {
    const r = await runx(ws, ["skill", "skills/nitro", "--json"]);
    expect(r.code).toBe(2);
    const envelope = r.json();
    expect(envelope).toMatchObject({
      status: "needs_credential",
      outcome: "deferred",
      receipt_id: null,
      credential_requirement: {
        credential: "nitro",
        provider: "nitrosend",
        auth_modes: ["api_key"],
        env: ["NITRO_KEY"],
      },
    });
    expect(String(envelope.next)).toBe(
      `printf '%s' "$NITRO_KEY" | runx credential set nitrosend --profile <name> --auth-mode api_key --from-stdin`,
    );
    expect(existsSync(join(ws.root, "spawned.txt"))).toBe(false);
    const text = await runx(ws, ["skill", "skills/nitro"]);
    expect(text.code).toBe(2);
    expect(text.stdout).toContain("status: needs_credential");
    expect(text.stdout).toContain("runx credential bind <name> --skill nitro --credential nitro");
    expect(text.stdout).toContain("or export NITRO_KEY");
    expect(existsSync(join(ws.root, "spawned.txt"))).toBe(false);
  });

  it("resume re-resolves the profile named by --profile and delivers its current material", async () => {
    ws.write(
      "skills/nitro/X.yaml",
      ws
        .read("skills/nitro/X.yaml")
        .replace(
          "    credential: nitro\n",
          "    credential: nitro\n    inputs:\n      note:\n        type: string\n        required: true\n",
        ),
    );
    expect((await setProfile("nitrosend", "chosen", "first_secret_Aa11Bb22")).code).toBe(0);
    expect((await setProfile("nitrosend", "fallback", "fallback_secret_Cc33")).code).toBe(0);
    const paused = await runx(ws, ["skill", "skills/nitro", "--profile", "chosen", "--json"]);
    expect(paused.code, paused.stdout + paused.stderr).toBe(2);
    const runId = String(paused.json().run_id);
    const requestId = String((paused.json().requests as Array<{ id: string }>)[0]?.id);
    // Rotation between pause and resume takes effect; the checkpoint held the name only.
    expect((await setProfile("nitrosend", "chosen", "rotated_secret_Dd44Ee55")).code).toBe(0);
    expect((await setProfile("nitrosend", "fallback", "fallback_secret_Cc33")).code).toBe(0);
    const state = bytesUnder(join(ws.root, ".runx"));
    expect(state).toContain('"credential_profile":"chosen"');
    expect(state).not.toContain("first_secret_Aa11Bb22");
    ws.write("answers.json", JSON.stringify({ answers: { [requestId]: { note: "go" } } }));
    const resumed = await runx(ws, ["resume", runId, "answers.json", "--json"]);
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    const out = resumed.json<{ result: ProbeResult }>().result;
    expect(out.digest).toBe(sha("rotated_secret_Dd44Ee55"));
    expect(out.token).toBe("[redacted-credential]");
    expect(bytesUnder(join(ws.root, ".runx"))).not.toContain("rotated_secret_Dd44Ee55");
  });

  it("resolves --profile > project binding > provider default > exported env > .env", async () => {
    ws.write(".env", `# dev fallback\nNITRO_KEY="${DOTENV_SECRET}"\n`);
    const dotenv = await probe();
    expect(dotenv.out.digest).toBe(sha(DOTENV_SECRET));

    const exported = await probe([], { NITRO_KEY: ENV_SECRET });
    expect(exported.out.digest).toBe(sha(ENV_SECRET));

    // `set` makes default-one the provider default; a second set moves the default to it.
    expect((await setProfile("nitrosend", "bound-one", OTHER_SECRET)).code).toBe(0);
    expect((await setProfile("nitrosend", "default-one", DEFAULT_SECRET)).code).toBe(0);
    expect((await setProfile("nitrosend", "explicit-one", PROFILE_SECRET)).code).toBe(0);
    expect((await setProfile("nitrosend", "default-one", DEFAULT_SECRET)).code).toBe(0);
    const byDefault = await probe([], { NITRO_KEY: ENV_SECRET });
    expect(byDefault.out.digest).toBe(sha(DEFAULT_SECRET));

    expect(
      (await runx(ws, ["credential", "bind", "bound-one", "--provider", "nitrosend"])).code,
    ).toBe(0);
    const byBinding = await probe([], { NITRO_KEY: ENV_SECRET });
    expect(byBinding.out.digest).toBe(sha(OTHER_SECRET));

    // The narrower skill binding wins over the provider binding.
    const bindSkill = [
      "credential",
      "bind",
      "explicit-one",
      "--skill",
      "nitro",
      "--credential",
      "nitro",
    ];
    expect((await runx(ws, bindSkill)).code).toBe(0);
    expect((await probe()).out.digest).toBe(sha(PROFILE_SECRET));
    expect(
      (
        await runx(ws, [
          "credential",
          "bind",
          "bound-one",
          "--skill",
          "nitro",
          "--credential",
          "nitro",
        ])
      ).code,
    ).toBe(0);

    const explicit = await probe(["--profile", "explicit-one"], { NITRO_KEY: ENV_SECRET });
    expect(explicit.out.digest).toBe(sha(PROFILE_SECRET));

    // Each delivered value reaches the runner under NITRO_KEY only and is scrubbed everywhere.
    for (const { r, out } of [dotenv, exported, byDefault, byBinding, explicit]) {
      expect(out.token).toBe("[redacted-credential]");
      expect(out.names.split(" ")).toContain("NITRO_KEY");
      expect(r.stdout + r.stderr).not.toMatch(/secret_[A-Za-z0-9]{10}/);
    }
    const state = bytesUnder(join(ws.root, ".runx"));
    for (const secret of [
      PROFILE_SECRET,
      OTHER_SECRET,
      DEFAULT_SECRET,
      ENV_SECRET,
      DOTENV_SECRET,
    ]) {
      expect(state).not.toContain(secret);
      expect(bytesUnder(HOME())).not.toContain(secret);
    }
    // The receipts recorded the scrubbed stream, never the material.
    expect(readdirSync(join(ws.root, ".runx", "receipts")).length).toBeGreaterThan(0);
  });

  it("delivers the credential only under its declared name, not the ambient or .env names", async () => {
    ws.write(".env", "UNDECLARED_DOTENV=dotenv_only_value_123\n");
    expect((await setProfile("nitrosend", "p", PROFILE_SECRET)).code).toBe(0);
    const { out } = await probe([], { SOME_AMBIENT: "ambient_value_456" });
    const names = out.names.trim().split(" ");
    expect(names).toContain("NITRO_KEY");
    expect(names).not.toContain("UNDECLARED_DOTENV");
    expect(names).not.toContain("SOME_AMBIENT");
    expect(names).not.toContain("RUNX_HOME");
    expect(out.digest).toBe(sha(PROFILE_SECRET));
  });

  it("fails clearly on a profile that does not fit, and on ambiguous auth modes", async () => {
    expect((await setProfile("other", "wrong", PROFILE_SECRET)).code).toBe(0);
    const mismatch = await runx(ws, ["skill", "skills/nitro", "--profile", "wrong", "--json"]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.json().error).toMatchObject({ reason: "CREDENTIAL_MISMATCH" });
    const missing = await runx(ws, ["skill", "skills/nitro", "--profile", "nobody", "--json"]);
    expect(missing.json().error).toMatchObject({ reason: "CREDENTIAL_PROFILE_NOT_FOUND" });

    writeNitroSkill(
      [
        "  twitter:",
        "    provider: twitter",
        "    auth:",
        "      bearer:",
        "        delivery:",
        "          env: TW_BEARER",
        "      oauth1_user:",
        "        delivery:",
        "          env: TW_USER",
      ].join("\n"),
    );
    ws.write(
      "skills/nitro/X.yaml",
      ws.read("skills/nitro/X.yaml").replace("credential: nitro", "credential: twitter"),
    );
    const ambiguous = await runx(ws, ["skill", "skills/nitro", "--json"], {
      env: { TW_BEARER: "bearer_value_1234", TW_USER: "user_value_5678" },
    });
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.json().error).toMatchObject({
      reason: "CREDENTIAL_AMBIGUOUS",
      names: ["TW_BEARER", "TW_USER"],
    });
    expect(ambiguous.stdout + ambiguous.stderr).not.toContain("bearer_value_1234");
    expect(existsSync(join(ws.root, "spawned.txt"))).toBe(false);
    expect(
      (await setProfile("twitter", "tw", "tw_bearer_secret_99", ["--auth-mode", "bearer"])).code,
    ).toBe(0);
    const chosen = await runx(ws, ["skill", "skills/nitro", "--json"], {
      env: { TW_BEARER: "bearer_value_1234", TW_USER: "user_value_5678" },
    });
    expect(chosen.code).toBe(0);
  });

  it("resolves a graph step's own credential and fails that step before its process when none matches", async () => {
    ws.write(
      "skills/nitro/X.yaml",
      `${ws.read("skills/nitro/X.yaml")}    outputs:\n      digest: string\n      token: string\n`,
    );
    ws.write("skills/flow/SKILL.md", "---\nname: flow\n---\nCalls nitro as a step.\n");
    ws.write(
      "skills/flow/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    graph:",
        "      name: flow",
        "      result_from: [call]",
        "      steps:",
        "        - id: call",
        "          skill: ../nitro",
        "",
      ].join("\n"),
    );
    const missing = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain("CREDENTIAL_UNAVAILABLE");
    expect(existsSync(join(ws.root, "spawned.txt"))).toBe(false);
    expect((await setProfile("nitrosend", "p", PROFILE_SECRET)).code).toBe(0);
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(sha(PROFILE_SECRET));
    expect(r.stdout).not.toContain(PROFILE_SECRET);
    expect(bytesUnder(join(ws.root, ".runx"))).not.toContain(PROFILE_SECRET);
  });

  it("refuses --profile for a runner that declares no credential", async () => {
    ws.write("skills/plain/SKILL.md", "---\nname: plain\n---\nPlain.\n");
    ws.write(
      "skills/plain/X.yaml",
      "runners:\n  default:\n    type: cli-tool\n    command: 'true'\n",
    );
    const r = await runx(ws, ["skill", "skills/plain", "--profile", "p", "--json"]);
    expect(r.code).toBe(64);
  });

  it("names file and line for a runner credential that is not declared or a bad declaration", async () => {
    ws.write(
      "skills/nitro/X.yaml",
      "runners:\n  default:\n    type: cli-tool\n    command: sh\n    credential: ghost\n",
    );
    const r = await runx(ws, ["skill", "skills/nitro", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({
      reason: "PROFILE_INVALID",
      file: "skills/nitro/X.yaml",
      line: 5,
      path: "runners.default.credential",
    });
    ws.write(
      "skills/nitro/X.yaml",
      [
        "credentials:",
        "  nitro:",
        "    provider: nitrosend",
        "    auth:",
        "      api_key:",
        "        delivery:",
        "          env: RUNX_AGENT_API_KEY",
        "runners:",
        "  default:",
        "    type: cli-tool",
        "    command: sh",
        "    credential: nitro",
        "",
      ].join("\n"),
    );
    const secretName = await runx(ws, ["skill", "skills/nitro", "--json"]);
    expect(secretName.json().error).toMatchObject({
      reason: "PROFILE_INVALID",
      line: 7,
      path: "credentials.nitro.auth.api_key.delivery.env",
    });
    ws.write(
      "skills/nitro/X.yaml",
      "credentials:\n  nitro:\n    provider: nitrosend\n    auth: {}\nrunners:\n  default:\n    type: cli-tool\n    command: sh\n",
    );
    const noAuth = await runx(ws, ["skill", "skills/nitro", "--json"]);
    expect(noAuth.json().error).toMatchObject({
      reason: "PROFILE_INVALID",
      file: "skills/nitro/X.yaml",
    });
  });
});

describe("workspace .env", () => {
  beforeEach(() => {
    ws.write("skills/greet/SKILL.md", "---\nname: greet\n---\nGreets.\n");
    ws.write(
      "skills/greet/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: cli-tool",
        "    command: sh",
        '    args: [-c, \'printf "{\\"greeting\\":\\"%s\\",\\"other\\":\\"%s\\"}" "$GREETING" "$OTHER"\']',
        "    environment:",
        "      required: [GREETING]",
        "      optional: [OTHER]",
        "",
      ].join("\n"),
    );
  });

  it("fills missing names from .env as data, exported values win, and .env values are scrubbed", async () => {
    ws.write(
      ".env",
      [
        "# comment",
        "export GREETING='hello_from_dotenv $(touch pwned)'",
        "OTHER=other_dotenv_value # trailing comment",
        "",
      ].join("\n"),
    );
    const r = await runx(ws, ["skill", "skills/greet", "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json().result).toEqual({
      greeting: "[redacted-credential]",
      other: "[redacted-credential]",
    });
    expect(existsSync(join(ws.root, "pwned"))).toBe(false);
    const state = bytesUnder(join(ws.root, ".runx"));
    expect(state).not.toContain("hello_from_dotenv");
    expect(state).not.toContain("other_dotenv_value");

    const exported = await runx(ws, ["skill", "skills/greet", "--json"], {
      env: { GREETING: "exported_greeting" },
    });
    expect(exported.json().result).toEqual({
      greeting: "exported_greeting",
      other: "[redacted-credential]",
    });
  });

  it("reports a malformed .env by line without echoing the line", async () => {
    ws.write(".env", "GOOD=1\nthis line has_secret_material_42\n");
    const r = await runx(ws, ["skill", "skills/greet", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({ reason: "CONFIG_INVALID", file: ".env", line: 2 });
    expect(r.stdout + r.stderr).not.toContain("has_secret_material_42");
    const help = await runx(ws, ["skill", "--help"]);
    expect(help.code).toBe(0);
  });
});
