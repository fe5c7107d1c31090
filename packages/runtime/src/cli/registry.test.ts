import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
let env: Record<string, string>;

beforeEach(() => {
  ws = makeWorkspace("runx-registry-");
  ws.addBundledSkill("echo");
  env = { RUNX_REGISTRY_DIR: join(ws.root, "registry") };
});
afterEach(() => ws.cleanup());

interface Failure {
  status: string;
  error: { code: string; reason: string; message: string };
}

const RECORD = "registry/acme/echo/0.1.0.json";

function readRecord(): Record<string, unknown> {
  return JSON.parse(ws.read(RECORD)) as Record<string, unknown>;
}

function writeRecord(record: unknown): void {
  writeFileSync(join(ws.root, RECORD), JSON.stringify(record));
}

async function publishEcho(): Promise<Record<string, unknown>> {
  const r = await runx(ws, ["registry", "publish", "skills/echo", "--owner", "acme", "--json"], {
    env,
  });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return r.json();
}

/** Everything under the workspace except the registry record itself. */
function snapshot(): string[] {
  return ws.files().filter((f) => !f.startsWith("registry/"));
}

describe("runx registry package", () => {
  it("prints the exact file set and digests and writes nothing", async () => {
    ws.write("skills/echo/node_modules/x/index.js", "ignored");
    const before = ws.files();
    const r = await runx(ws, ["registry", "package", "skills/echo", "--json"], { env });
    expect(r.code, r.stderr).toBe(0);
    const p = r.json<{
      name: string;
      version: string;
      package_digest: string;
      files: Array<{ path: string }>;
    }>();
    expect(p.name).toBe("echo");
    expect(p.version).toBe("0.1.0");
    expect(p.files.map((f) => f.path)).toEqual([
      "SKILL.md",
      "X.yaml",
      "fixtures/echo-message.yaml",
      "fixtures/echo-unicode.yaml",
    ]);
    expect(p.package_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(ws.files()).toEqual(before);
    expect(ws.files(".").some((f) => f.startsWith("registry"))).toBe(false);
  });

  it("refuses symlinks and secret-looking files inside the package", async () => {
    symlinkSync("/etc/hostname", join(ws.root, "skills/echo/link"));
    const r = await runx(ws, ["registry", "package", "skills/echo", "--json"], { env });
    expect(r.code).toBe(1);
    expect(r.json<Failure>().error.reason).toBe("REGISTRY_INVALID");
    expect(r.json<Failure>().error.message).toContain("symlink");
    ws.write("skills/hello/SKILL.md", "---\nname: hello\n---\nhi\n");
    ws.write("skills/hello/.env", "TOKEN=x\n");
    const s = await runx(ws, ["registry", "publish", "skills/hello", "--owner", "acme", "--json"], {
      env,
    });
    expect(s.code).toBe(1);
    expect(s.json<Failure>().error.message).toContain("looks like a secret");
    expect(ws.files().some((f) => f.startsWith("registry/"))).toBe(false);
  });
});

describe("registry round trip", () => {
  it("package → publish → search → add → run, with a signed record", async () => {
    const packaged = (
      await runx(ws, ["registry", "package", "skills/echo", "--owner", "acme", "--json"], { env })
    ).json<{ package_digest: string }>();
    const published = await publishEcho();
    expect(published).toMatchObject({
      status: "published",
      skill_id: "acme/echo",
      version: "0.1.0",
      trust_tier: "community",
      package_digest: packaged.package_digest,
    });
    const record = readRecord();
    expect(record.signature).toMatchObject({ alg: "ed25519" });
    // Idempotent re-publish.
    expect((await publishEcho()).status).toBe("unchanged");

    const search = await runx(ws, ["registry", "search", "CLI-TOOL", "--json"], { env });
    expect(search.code).toBe(0);
    const items = search.json<{ items: Array<Record<string, unknown>> }>().items;
    expect(items).toEqual([
      expect.objectContaining({
        skill_id: "acme/echo",
        version: "0.1.0",
        trust_tier: "community",
        profile_mode: "profiled",
        run_command: "runx skill acme/echo@0.1.0",
      }),
    ]);
    const none = await runx(ws, ["registry", "search", "nothing-matches", "--json"], { env });
    expect(none.json<{ items: unknown[] }>().items).toEqual([]);

    const add = await runx(
      ws,
      ["add", "acme/echo@0.1.0", "--to", "./vendor", "--digest", packaged.package_digest, "--json"],
      { env },
    );
    expect(add.code, add.stdout).toBe(0);
    expect(add.json()).toMatchObject({
      status: "installed",
      destination: "vendor/acme/echo",
      package_digest: packaged.package_digest,
    });
    expect(ws.read("vendor/acme/echo/X.yaml")).toBe(ws.read("skills/echo/X.yaml"));
    const again = await runx(ws, ["add", "acme/echo@0.1.0", "--to", "./vendor", "--json"], { env });
    expect(again.json()).toMatchObject({ status: "unchanged" });

    const run = await runx(ws, ["skill", "vendor/acme/echo", "--message", "hi", "--json"], { env });
    expect(run.code).toBe(0);
    expect(run.json()).toMatchObject({ status: "sealed", result: { message: "hi" } });

    // Direct resolution of the registry ref binds the same package digest in the receipt.
    const direct = await runx(ws, ["skill", "acme/echo@0.1.0", "--message", "yo", "--json"], {
      env,
    });
    expect(direct.code, direct.stdout).toBe(0);
    const envelope = direct.json<{ receipt_id: string; result: unknown }>();
    expect(envelope.result).toEqual({ message: "yo" });
    const receipt = ws.read(`.runx/receipts/sha256-${envelope.receipt_id.slice(7)}.json`);
    expect(receipt).toContain(packaged.package_digest);
    // `registry:` without a version runs the latest; an unprefixed ref needs @version, so a
    // mistyped path is still reported as a missing package.
    const latest = await runx(ws, ["skill", "registry:acme/echo", "--message", "l", "--json"], {
      env,
    });
    expect(latest.json()).toMatchObject({ status: "sealed", result: { message: "l" } });
    const typo = await runx(ws, ["skill", "skills/ech", "--json"], { env });
    expect(typo.json<Failure>().error.reason).toBe("PACKAGE_NOT_FOUND");
  });

  it("runs registry: graph steps and reads registry: context skills", async () => {
    await publishEcho();
    ws.write("skills/via-registry/SKILL.md", "---\nname: via-registry\n---\nCalls echo.\n");
    ws.write(
      "skills/via-registry/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    inputs:",
        "      message: {type: string, required: true}",
        "    graph:",
        "      name: via-registry",
        "      result_from: [call]",
        "      steps:",
        "        - id: call",
        "          skill: registry:acme/echo@0.1.0",
        "          inputs:",
        "            message: $input.message",
        "",
      ].join("\n"),
    );
    const r = await runx(ws, ["skill", "skills/via-registry", "--message", "hop", "--json"], {
      env,
    });
    expect(r.code, r.stdout).toBe(0);
    expect(r.json()).toMatchObject({ status: "sealed", result: { message: "hop" } });

    ws.write("skills/advised/SKILL.md", "---\nname: advised\n---\nThink.\n");
    ws.write(
      "skills/advised/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: agent-task",
        "    agent: thinker",
        "    task: think",
        "    context_skills: [registry:acme/echo@0.1.0]",
        "    outputs: {answer: string}",
        "",
      ].join("\n"),
    );
    const paused = await runx(ws, ["skill", "skills/advised", "--json"], { env });
    expect(paused.code, paused.stdout).toBe(2);
    expect(paused.stdout).toContain("runx.skill.context");
    expect(paused.stdout).toContain("registry:acme/echo@0.1.0");
  });
});

describe("registry refusals leave nothing written", () => {
  it("refuses a tampered package file (digest mismatch)", async () => {
    await publishEcho();
    const record = readRecord();
    const files = record.package_files as Array<{ path: string; content: string }>;
    files[0]!.content += "\n# injected\n";
    writeRecord(record);
    const before = snapshot();
    const add = await runx(ws, ["add", "acme/echo@0.1.0", "--json"], { env });
    expect(add.code).toBe(1);
    const failure = add.json<Failure>();
    expect(failure.error.code).toBe("registry_error");
    expect(failure.error.reason).toBe("REGISTRY_DIGEST_MISMATCH");
    expect(failure.error.message).toContain("Digest mismatch for acme/echo@0.1.0");
    const run = await runx(ws, ["skill", "acme/echo@0.1.0", "--message", "x", "--json"], { env });
    expect(run.json<Failure>().error.reason).toBe("REGISTRY_DIGEST_MISMATCH");
    expect(snapshot()).toEqual(before);
  });

  it("refuses a record whose manifest was altered after signing", async () => {
    await publishEcho();
    const record = readRecord();
    record.trust_tier = "first_party";
    writeRecord(record);
    const before = snapshot();
    const add = await runx(ws, ["add", "acme/echo@0.1.0", "--json"], { env });
    expect(add.code).toBe(1);
    expect(add.json<Failure>().error.reason).toBe("REGISTRY_SIGNATURE_INVALID");
    expect(snapshot()).toEqual(before);
  });

  it("refuses an --digest mismatch", async () => {
    await publishEcho();
    const before = snapshot();
    const wrong = `sha256:${"0".repeat(64)}`;
    const add = await runx(ws, ["add", "acme/echo@0.1.0", "--digest", wrong, "--json"], { env });
    expect(add.code).toBe(1);
    expect(add.json<Failure>().error).toMatchObject({
      reason: "REGISTRY_DIGEST_MISMATCH",
      expected: wrong,
    });
    const run = await runx(
      ws,
      ["skill", "acme/echo@0.1.0", "--digest", wrong, "--message", "x", "--json"],
      { env },
    );
    expect(run.json<Failure>().error.reason).toBe("REGISTRY_DIGEST_MISMATCH");
    expect(snapshot()).toEqual(before);
  });

  it("refuses an unsigned package and one signed by an unknown key", async () => {
    await publishEcho();
    const record = readRecord();
    const { signature: _dropped, ...unsigned } = record;
    writeRecord(unsigned);
    const before = snapshot();
    const add = await runx(ws, ["add", "acme/echo@0.1.0", "--json"], { env });
    expect(add.code).toBe(1);
    expect(add.json<Failure>().error).toMatchObject({ reason: "REGISTRY_SIGNATURE_INVALID" });
    expect(add.json<Failure>().error.message).toContain("unsigned");
    writeRecord(record);
    // A reader whose RUNX_HOME holds a different publisher key does not know the signer.
    const stranger = await runx(ws, ["add", "acme/echo@0.1.0", "--json"], {
      env: { ...env, RUNX_HOME: join(ws.home, "other") },
    });
    expect(stranger.code).toBe(1);
    expect(stranger.json<Failure>().error.message).toContain("unknown key");
    expect(snapshot()).toEqual(before);
  });

  it("refuses path traversal, absolute paths and symlink entries inside a package", async () => {
    await publishEcho();
    const original = readRecord();
    const before = snapshot();
    const cases: Array<[unknown, string]> = [
      [{ path: "../escape.sh", content: "x" }, "climbs out"],
      [{ path: "/etc/evil", content: "x" }, "absolute"],
      [{ path: "a/../../b", content: "x" }, "climbs out"],
      [{ path: "link", type: "symlink", target: "/etc/passwd" }, "symlink"],
    ];
    for (const [entry, message] of cases) {
      const record = structuredClone(original);
      (record.package_files as unknown[]).push(entry);
      writeRecord(record);
      const add = await runx(ws, ["add", "acme/echo@0.1.0", "--to", "out", "--json"], { env });
      expect(add.code).toBe(1);
      const failure = add.json<Failure>();
      expect(failure.error.reason).toBe("REGISTRY_INVALID");
      expect(failure.error.message).toContain(message);
    }
    expect(snapshot()).toEqual(before);
  });

  it("resolves owner/name without a version to the latest published version; a local path wins", async () => {
    await publishEcho();
    const latest = await runx(ws, ["skill", "acme/echo", "--message", "hi", "--json"], { env });
    expect(latest.code, latest.stderr).toBe(0);
    expect(latest.json()).toMatchObject({ status: "sealed", result: { message: "hi" } });
    expect(latest.json()).toMatchObject({ skill_name: "echo" });
    // A workspace directory of the same shape is a path, not a registry ref.
    ws.write(
      "acme/echo/SKILL.md",
      ws.read("skills/echo/SKILL.md").replace("name: echo", "name: mine"),
    );
    ws.write(
      "acme/echo/X.yaml",
      ws.read("skills/echo/X.yaml").replace("skill: echo", "skill: mine"),
    );
    const local = await runx(ws, ["skill", "acme/echo", "--message", "hi", "--json"], { env });
    expect(local.code, local.stderr).toBe(0);
    expect(local.json()).toMatchObject({ status: "sealed", skill_name: "mine" });
    // A mistyped path that the registry does not hold stays a missing package.
    const typo = await runx(ws, ["skill", "skills/ech", "--json"], { env });
    expect(typo.code).not.toBe(0);
    expect(typo.json<Failure>().error.reason).toBe("PACKAGE_NOT_FOUND");
  });

  it("refuses to publish a package whose harness fails, and writes no record", async () => {
    const fixture = "skills/echo/fixtures/echo-message.yaml";
    // Break the expectation only (the run itself still seals).
    ws.write(fixture, ws.read(fixture).replace("status: sealed", "status: failure"));
    const r = await runx(ws, ["registry", "publish", "skills/echo", "--owner", "acme", "--json"], {
      env,
    });
    expect(r.code).toBe(1);
    const failure = r.json<Failure>();
    expect(failure.error.reason).toBe("REGISTRY_INVALID");
    expect(failure.error.message).toContain("harness must pass before it is published");
    expect(ws.files().some((f) => f.startsWith("registry/"))).toBe(false);
  });

  it("refuses to overwrite a different existing destination", async () => {
    await publishEcho();
    ws.write("skills/acme/echo/SKILL.md", "---\nname: echo\n---\nmine\n");
    const add = await runx(ws, ["add", "acme/echo@0.1.0", "--json"], { env });
    expect(add.code).toBe(1);
    expect(add.json<Failure>().error.reason).toBe("REGISTRY_CONFLICT");
    expect(readFileSync(join(ws.root, "skills/acme/echo/SKILL.md"), "utf8")).toContain("mine");
  });

  it("refuses a trust tier the publisher key is not trusted for, and re-publishing changed content", async () => {
    const r = await runx(
      ws,
      [
        "registry",
        "publish",
        "skills/echo",
        "--owner",
        "acme",
        "--trust-tier",
        "first_party",
        "--json",
      ],
      { env },
    );
    expect(r.code).toBe(1);
    expect(r.json<Failure>().error.reason).toBe("REGISTRY_SIGNATURE_INVALID");
    expect(ws.files().some((f) => f.startsWith("registry/"))).toBe(false);
    await publishEcho();
    ws.write("skills/echo/notes.md", "changed\n");
    const changed = await runx(
      ws,
      ["registry", "publish", "skills/echo", "--owner", "acme", "--json"],
      { env },
    );
    expect(changed.code).toBe(1);
    expect(changed.json<Failure>().error.reason).toBe("REGISTRY_CONFLICT");
  });

  it("verifies first_party records only from keys the reader trusts for that tier", async () => {
    const seed = Buffer.alloc(32, 7).toString("base64url");
    const keyEnv = {
      ...env,
      RUNX_REGISTRY_PUBLISHER_KID: "acme-release",
      RUNX_REGISTRY_PUBLISHER_ED25519_SEED_BASE64: seed,
    };
    const { ed25519FromSeed } = await import("../receipts/ed25519.js");
    const pub = Buffer.from(ed25519FromSeed(Buffer.alloc(32, 7)).publicKey).toString("base64url");
    const trusted = { ...keyEnv, RUNX_REGISTRY_TRUSTED_KEYS: `acme-release:${pub}:first_party` };
    const r = await runx(
      ws,
      [
        "registry",
        "publish",
        "skills/echo",
        "--owner",
        "acme",
        "--trust-tier",
        "first_party",
        "--json",
      ],
      { env: trusted },
    );
    expect(r.code, r.stdout).toBe(0);
    const ok = await runx(ws, ["registry", "search", "echo", "--json"], { env: trusted });
    expect(ok.json<{ items: unknown[] }>().items).toEqual([
      expect.objectContaining({ trust_tier: "first_party" }),
    ]);
    // Same key trusted only up to community: the record is refused, not listed.
    const lower = { ...keyEnv, RUNX_REGISTRY_TRUSTED_KEYS: `acme-release:${pub}` };
    const refused = await runx(ws, ["registry", "search", "echo", "--json"], { env: lower });
    const result = refused.json<{ items: unknown[]; refused: Array<{ code: string }> }>();
    expect(result.items).toEqual([]);
    expect(result.refused).toEqual([
      expect.objectContaining({ code: "REGISTRY_SIGNATURE_INVALID" }),
    ]);
  });
});
