import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
  ws.addBundledSkill("echo");
  ws.addBundledSkill("hello-world");
});
afterEach(() => ws.cleanup());

function receiptFiles(): string[] {
  const dir = join(ws.root, ".runx", "receipts");
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith("sha256-")) : [];
}

describe("runx skill", () => {
  it("runs the echo skill, seals a sha256 receipt and returns the inputs as the result", async () => {
    const r = await runx(ws, ["skill", "skills/echo", "--message", "hi", "--json"]);
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env).toMatchObject({
      schema: "runx.skill_run.v1",
      status: "sealed",
      outcome: "completed",
      skill_name: "echo",
      runner: "default",
      closure: { disposition: "closed", reason_code: "process_closed" },
      result: { message: "hi" },
      requests: [],
      next: null,
    });
    expect(env.receipt_id).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(env.run_id).toMatch(/^run_default_[0-9a-f]{16}$/);
    const file = `sha256-${String(env.receipt_id).slice(7)}.json`;
    expect(receiptFiles()).toEqual([file]);
    const receipt = JSON.parse(ws.read(`.runx/receipts/${file}`));
    expect(receipt.schema).toBe("runx.receipt.v1");
    expect(receipt.signature.value).toBe(`sig:${receipt.digest}`);
    expect(receipt.authority.enforcement.execution_boundary).toEqual({
      kind: "trusted_host_process",
    });
  });

  it("runs only the package and execution closure it is bound to", async () => {
    const first = await runx(ws, ["skill", "skills/echo", "--message", "hi", "--json"]);
    const file = `sha256-${String(first.json().receipt_id).slice(7)}.json`;
    const meta = (
      JSON.parse(ws.read(`.runx/receipts/${file}`)) as {
        metadata: { package_digest: string; execution_closure_digest: string };
      }
    ).metadata;
    const bound = (closure: string) =>
      runx(ws, [
        "skill",
        "skills/echo",
        "--message",
        "bound",
        "--package-digest",
        meta.package_digest,
        "--execution-closure-digest",
        closure,
        "--json",
      ]);
    const ok = await bound(meta.execution_closure_digest);
    expect(ok.code).toBe(0);
    expect(ok.json()).toMatchObject({ status: "sealed", result: { message: "bound" } });

    const wrong = await bound(`sha256:${"0".repeat(64)}`);
    expect(wrong.code).not.toBe(0);
    expect(wrong.json().error).toMatchObject({
      reason: "POLICY_DENIED",
      message: "the execution-closure digest does not match the bound digest",
      expected: `sha256:${"0".repeat(64)}`,
      actual: meta.execution_closure_digest,
      stage: "admit_package",
    });
    // Refused at admission: the refusal is sealed, and the skill never ran.
    expect(wrong.json().result).toBeUndefined();
    expect(receiptFiles()).toHaveLength(3);
  });

  it("seals two identical runs in the same second as two distinct receipts", async () => {
    const a = await runx(ws, ["skill", "skills/echo", "--message", "same", "--json"]);
    const b = await runx(ws, ["skill", "skills/echo", "--message", "same", "--json"]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(a.json().receipt_id).not.toBe(b.json().receipt_id);
    expect(receiptFiles()).toHaveLength(2);
  });

  it("resolves a bare skill name from the workspace skills/ folder", async () => {
    const r = await runx(ws, ["skill", "echo", "-i", "message=by name", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json().result).toEqual({ message: "by name" });
  });

  it("runs the javascript hello-world skill in its isolated worker", async () => {
    const r = await runx(ws, ["skill", "skills/hello-world", "--name", "Ada", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      status: "sealed",
      result: { message: "hello, Ada!", length: 3 },
    });
  });

  it("takes the whole input object from --inputs on stdin", async () => {
    const r = await runx(ws, ["skill", "skills/echo", "--inputs", "-", "--json"], {
      stdin: JSON.stringify({ message: "from stdin" }),
    });
    expect(r.code).toBe(0);
    expect(r.json().result).toEqual({ message: "from stdin" });
  });

  it("pauses with an input request (exit 2) when a required input is missing", async () => {
    const r = await runx(ws, ["skill", "skills/echo", "--json"]);
    expect(r.code).toBe(2);
    const env = r.json<{
      status: string;
      requests: Array<{ id: string; kind: string; questions: Array<{ id: string }> }>;
      receipt_id: string;
    }>();
    expect(env.status).toBe("needs_agent");
    expect(env.requests).toHaveLength(1);
    expect(env.requests[0]).toMatchObject({ id: "input.echo.message", kind: "input" });
    expect(env.requests[0]?.questions.map((q) => q.id)).toEqual(["message"]);
    expect(env.receipt_id).toMatch(/^sha256:/);
  });

  it("refuses an undeclared input with a blocked receipt and names the input", async () => {
    const r = await runx(ws, [
      "skill",
      "skills/echo",
      "--message",
      "x",
      "--colour",
      "crimson-x9",
      "--json",
    ]);
    expect(r.code).toBe(1);
    const failure = r.json<{ status: string; error: Record<string, unknown> }>();
    expect(failure.status).toBe("failure");
    expect(failure.error).toMatchObject({
      code: "input_error",
      reason: "INPUT_INVALID",
      path: "inputs.colour",
    });
    const id = String(failure.error.receipt_id);
    const receipt = JSON.parse(ws.read(`.runx/receipts/sha256-${id.slice(7)}.json`));
    expect(receipt.seal).toMatchObject({
      disposition: "blocked",
      reason_code: "preflight_refused",
    });
    expect(JSON.stringify(receipt)).not.toContain("crimson-x9");
  });

  it("reports a malformed package with file, line and column and writes no receipt", async () => {
    ws.write("skills/bad/SKILL.md", "---\nname: bad\n---\nbody\n");
    ws.write(
      "skills/bad/X.yaml",
      "runners:\n  default:\n    type: cli-tool\n    command: cat\n    colour: red\n",
    );
    const r = await runx(ws, ["skill", "skills/bad", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({
      reason: "PROFILE_INVALID",
      file: "skills/bad/X.yaml",
      line: 5,
      path: "runners.default.colour",
    });
    expect(receiptFiles()).toEqual([]);
    const human = await runx(ws, ["skill", "skills/bad"]);
    expect(human.stderr).toMatch(/^runx: skills\/bad\/X\.yaml:5:5: runners\.default\.colour: /);
    expect(human.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses a flat markdown file", async () => {
    ws.write("notes.md", "---\nname: notes\n---\n");
    const r = await runx(ws, ["skill", "notes.md", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({ reason: "PACKAGE_INVALID" });
  });

  it("seals a failed receipt with exit 1 when the process exits non-zero", async () => {
    ws.write("skills/fail/SKILL.md", "---\nname: fail\n---\n");
    ws.write("skills/fail/run.sh", "echo 'fixture failure' >&2\nexit 3\n");
    ws.write(
      "skills/fail/X.yaml",
      "runners:\n  default:\n    type: cli-tool\n    command: sh\n    args: [./run.sh]\n",
    );
    const r = await runx(ws, ["skill", "skills/fail", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json()).toMatchObject({
      status: "sealed",
      outcome: "failed",
      closure: { disposition: "failed", reason_code: "process_failed" },
    });
    expect(String((r.json().closure as { summary: string }).summary)).toContain("fixture failure");
  });
});

describe("runx verify", () => {
  it("reports a fresh store valid and a one-byte edit invalid with exit 3 naming the check", async () => {
    const run = await runx(ws, ["skill", "skills/echo", "--message", "hi", "--json"]);
    const id = String(run.json().receipt_id);
    const ok = await runx(ws, ["verify", "--json"]);
    expect(ok.code).toBe(0);
    expect(ok.json()).toMatchObject({ valid: true, signature_mode: "local-development" });

    const file = join(ws.root, ".runx", "receipts", `sha256-${id.slice(7)}.json`);
    const text = readFileSync(file, "utf8");
    writeFileSync(file, text.replace("step default completed", "step default completeD"));
    const bad = await runx(ws, ["verify", "--json"]);
    expect(bad.code).toBe(3);
    const report = bad.json<{
      valid: boolean;
      trees: Array<{ valid: boolean; findings: Array<{ code: string }> }>;
    }>();
    expect(report.valid).toBe(false);
    expect(report.trees[0]?.findings.map((f) => f.code)).toContain("seal_digest_mismatch");
    const human = await runx(ws, ["verify"]);
    expect(human.code).toBe(3);
    expect(human.stdout).toContain("seal_digest_mismatch");
  });

  it("verifies one run's tree with --run without reading the rest of the store", async () => {
    const first = await runx(ws, ["skill", "skills/echo", "--message", "one", "--json"]);
    const second = await runx(ws, ["skill", "skills/echo", "--message", "two", "--json"]);
    const other = String(second.json().receipt_id);
    const file = join(ws.root, ".runx", "receipts", `sha256-${other.slice(7)}.json`);
    writeFileSync(file, readFileSync(file, "utf8").replace('"closed"', '"failed"'));
    expect((await runx(ws, ["verify", "--json"])).code).toBe(3);
    const one = await runx(ws, ["verify", "--run", String(first.json().run_id), "--json"]);
    expect(one.code).toBe(0);
    expect(one.json()).toMatchObject({ valid: true, receipt_count: 1 });
    const two = await runx(ws, ["verify", "--run", String(second.json().run_id), "--json"]);
    expect(two.code).toBe(3);
    expect(two.json()).toMatchObject({ valid: false, receipt_count: 1 });
    const unknown = await runx(ws, ["verify", "--run", "run_nope", "--json"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr + unknown.stdout).not.toContain("    at ");
  });

  it("verifies a single receipt from a file and from stdin", async () => {
    const run = await runx(ws, ["skill", "skills/echo", "--message", "hi", "--json"]);
    const id = String(run.json().receipt_id);
    const rel = `.runx/receipts/sha256-${id.slice(7)}.json`;
    const byFile = await runx(ws, ["verify", "--receipt", rel, "--json"]);
    expect(byFile.code).toBe(0);
    expect(byFile.json()).toMatchObject({ receipt_id: id, valid: true });
    const tampered = ws.read(rel).replace('"closed"', '"failed"');
    const byStdin = await runx(ws, ["verify", "--receipt", "-", "--json"], { stdin: tampered });
    expect(byStdin.code).toBe(3);
    expect(byStdin.json<{ findings: Array<{ code: string }> }>().findings.length).toBeGreaterThan(
      0,
    );
  });
});

describe("production signing", () => {
  const SEED = Buffer.alloc(32, 7).toString("base64");
  it("signs with Ed25519 when all three signing variables are set, and verifies as verified", async () => {
    const env = {
      RUNX_RECEIPT_SIGN_KID: "ci-key-1",
      RUNX_RECEIPT_SIGN_ED25519_SEED_BASE64: SEED,
      RUNX_RECEIPT_SIGN_ISSUER_TYPE: "ci",
    };
    const run = await runx(ws, ["skill", "skills/echo", "--message", "signed", "--json"], { env });
    expect(run.code).toBe(0);
    const id = String(run.json().receipt_id);
    const receipt = JSON.parse(ws.read(`.runx/receipts/sha256-${id.slice(7)}.json`));
    expect(receipt.issuer).toMatchObject({ type: "ci", kid: "ci-key-1" });
    expect(receipt.signature.value).toMatch(/^base64:/);
    const verify = await runx(ws, ["verify", "--json"], { env });
    expect(verify.code).toBe(0);
    expect(verify.json()).toMatchObject({ valid: true, signature_mode: "production" });
    expect((verify.json().trees as Array<{ status: string }>)[0]?.status).toBe("verified");
  });

  it("refuses a partial signing configuration without echoing the seed", async () => {
    const env = { RUNX_RECEIPT_SIGN_KID: "k", RUNX_RECEIPT_SIGN_ED25519_SEED_BASE64: SEED };
    const r = await runx(ws, ["skill", "skills/echo", "--message", "x", "--json"], { env });
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({ reason: "SIGNER_CONFIG_INVALID" });
    expect(r.stdout + r.stderr).not.toContain(SEED);
  });
});

describe("runx history, list, init and help", () => {
  it("lists sealed receipts and paused runs, and shows one run in detail", async () => {
    const sealed = await runx(ws, ["skill", "skills/echo", "--message", "hi", "--json"]);
    const paused = await runx(ws, ["skill", "skills/echo", "--json"]);
    const h = await runx(ws, ["history", "--json"]);
    expect(h.code).toBe(0);
    const listing = h.json<{
      receipts: Array<{ id: string; verification: { status: string } }>;
      pendingRuns: Array<{ id: string }>;
    }>();
    expect(listing.receipts.map((r) => r.id)).toContain(sealed.json().receipt_id);
    expect(listing.receipts.every((r) => r.verification.status === "unverified")).toBe(true);
    expect(listing.pendingRuns.map((p) => p.id)).toEqual([paused.json().run_id]);
    const d = await runx(ws, ["history", "--detail", String(sealed.json().run_id), "--json"]);
    expect(d.code).toBe(0);
    expect(d.json()).toMatchObject({
      kind: "run",
      run: { status: "sealed", result: { message: "hi" } },
    });
    const missing = await runx(ws, [
      "history",
      "--detail",
      "run_default_0000000000000000",
      "--json",
    ]);
    expect(missing.code).toBe(1);
    expect(missing.json().error).toMatchObject({ reason: "RUN_NOT_FOUND" });
  });

  it("lists workspace skills with diagnostics for invalid packages", async () => {
    ws.write("skills/broken/SKILL.md", "---\nname: broken\nflag: &a yes\n---\n");
    const r = await runx(ws, ["list", "skills", "--json"]);
    expect(r.code).toBe(0);
    const items = r.json<{
      items: Array<{
        name: string;
        status: string;
        diagnostics: Array<{ code: string; line?: number }>;
      }>;
    }>().items;
    expect(items.filter((i) => i.status === "ok").map((i) => i.name)).toEqual([
      "echo",
      "hello-world",
    ]);
    const broken = items.find((i) => i.name === "broken");
    expect(broken?.status).toBe("invalid");
    expect(broken?.diagnostics[0]).toMatchObject({ code: "YAML_FORBIDDEN", line: 3 });
  });

  it("initialises the project idempotently", async () => {
    const first = await runx(ws, ["init", "--json"]);
    expect(first.code).toBe(0);
    expect(first.json().created).toContain(".runx/config.json");
    expect(existsSync(join(ws.root, ".runx", "receipts"))).toBe(true);
    const second = await runx(ws, ["init", "--json"]);
    expect(second.json().created).toEqual([]);
  });

  it("prints help for every command and refuses unknown commands and flags with exit 64", async () => {
    for (const command of ["skill", "history", "verify", "list", "init"]) {
      const r = await runx(ws, [command, "--help"]);
      expect(r.code, command).toBe(0);
      expect(r.stdout, command).toContain(`runx ${command}`);
      expect(r.stdout, command).toContain("Usage:");
    }
    expect((await runx(ws, ["--help"])).code).toBe(0);
    expect((await runx(ws, ["frobnicate"])).code).toBe(64);
    const badFlag = await runx(ws, ["verify", "--frob", "--json"]);
    expect(badFlag.code).toBe(64);
    expect(badFlag.json().error).toMatchObject({ reason: "USAGE" });
  });
});
