/**
 * Resource caps on the documents the CLI parses: nesting depth (YAML packages, SKILL.md
 * frontmatter, parser requests, JSON inputs and decision documents) and file sizes (SKILL.md,
 * X.yaml, graph documents, the whole package), including paths that are not regular files.
 * Each refusal is exit 1 with a clear code and the file (and line:col where there is one),
 * never a stack trace or a hang. Limits: packages/runtime/src/parser/nesting.ts and
 * packages/runtime/src/packages/read-capped.ts.
 */
import { execFileSync } from "node:child_process";
import { closeSync, ftruncateSync, openSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorkspace, runx, startApiProcess } from "./kit.js";
import type { ApiProcess, Workspace } from "./kit.js";

let ws: Workspace;
beforeAll(() => {
  ws = makeWorkspace("runx-sec-caps-");
});
afterAll(() => ws.cleanup());

const MIB = 1024 * 1024;

function mkfifoSync(path: string): void {
  execFileSync("mkfifo", [path]);
}
const PROFILE_HEAD = "runners:\n  default:\n    type: cli-tool\n    command: echo\n";

function skill(name: string, profile?: string, skillMd?: string): string {
  ws.write(`skills/${name}/SKILL.md`, skillMd ?? `---\nname: ${name}\n---\nA test package.\n`);
  if (profile !== undefined) ws.write(`skills/${name}/X.yaml`, profile);
  return `skills/${name}`;
}

interface Failure {
  code: string;
  reason: string;
  message: string;
  file?: string;
  line?: number;
  column?: number;
  path?: string;
  size?: number;
  limit?: number;
}

/** Runs the CLI with --json, expects the documented failure envelope, and returns its error. */
async function refused(args: string[], stdin?: string): Promise<Failure> {
  const r = await runx(ws, [...args, "--json"], { stdin, timeoutMs: 15_000 });
  expect(r.code, r.stdout + r.stderr).toBe(1);
  expect(r.stderr).not.toMatch(/\n\s+at |RangeError|Maximum call stack/);
  const envelope = r.json<{ status: string; error: Failure }>();
  expect(envelope.status).toBe("failure");
  expect(envelope.error.reason).not.toBe("INTERNAL");
  return envelope.error;
}

describe("nesting depth", () => {
  it("refuses 20,000 nested flow sequences in args with the file, line and column", async () => {
    const ref = skill(
      "flow",
      `${PROFILE_HEAD}    args: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`,
    );
    const error = await refused(["skill", ref]);
    expect(error).toMatchObject({
      reason: "NESTING_TOO_DEEP",
      file: "skills/flow/X.yaml",
      line: 5,
      // Root mapping, runners, default: the 62nd `[` after `args: ` is the 65th level.
      column: 11 + 61,
      limit: 64,
    });
    // Without --json: one located line, no stack.
    const text = await runx(ws, ["skill", ref]);
    expect(text.code).toBe(1);
    expect(text.stderr.trim()).toBe("runx: skills/flow/X.yaml:5:72: nesting deeper than 64 levels");
  });

  it("refuses 1,000 block levels and 3,000 compact entries in X.yaml", async () => {
    let block = `${PROFILE_HEAD}    args: [a]\nextra:\n`;
    for (let i = 1; i <= 1000; i++) block += `${" ".repeat(i)}k:\n`;
    const deep = await refused(["skill", skill("block", block)]);
    expect(deep).toMatchObject({ reason: "NESTING_TOO_DEEP", file: "skills/block/X.yaml" });
    // `extra` belongs to the root mapping (level 1): the `k` at indentation 64 opens level 65.
    expect(deep).toMatchObject({ line: 6 + 64, column: 65 });
    const compact = `${PROFILE_HEAD}    args: [a]\nextra:\n  ${"- ".repeat(3000)}x\n`;
    expect(await refused(["skill", skill("compact", compact)])).toMatchObject({
      reason: "NESTING_TOO_DEEP",
      file: "skills/compact/X.yaml",
      line: 7,
    });
  });

  it("refuses deep SKILL.md frontmatter at its line in SKILL.md", async () => {
    const frontmatter = `---\nname: fm\nextra: ${"[".repeat(3000)}${"]".repeat(3000)}\n---\nbody\n`;
    const error = await refused(["skill", skill("fm", undefined, frontmatter)]);
    expect(error).toMatchObject({
      reason: "NESTING_TOO_DEEP",
      file: "skills/fm/SKILL.md",
      line: 3,
      // The root mapping is level 1, so the 64th `[` (from column 8) opens level 65.
      column: 8 + 63,
    });
  });

  it("answers a deep parser request with the failure envelope, by line and column", async () => {
    const yaml = {
      input: { kind: "parser.validateGraphYaml", yaml: `name: g\nsteps: ${"[".repeat(20_000)}` },
    };
    const r = await runx(ws, ["parser", "eval", "--input", "-", "--json"], {
      stdin: JSON.stringify(yaml),
    });
    expect(r.code).toBe(1);
    expect(r.json()).toEqual({
      status: "failure",
      error: { code: "parse_error", message: "line 2, column 71: nesting deeper than 64 levels" },
    });
    const json = await runx(ws, ["parser", "eval", "--input", "-", "--json"], {
      stdin: `{"input": ${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
    });
    expect(json.code).toBe(1);
    expect(json.json()).toEqual({
      status: "failure",
      error: {
        code: "invalid_document",
        message: "line 1, column 74: nesting deeper than 64 levels",
      },
    });
    expect(json.stderr).toBe("");
  });

  it("refuses deep JSON inputs (--input-json, --inputs, kernel eval) before running", async () => {
    const ref = skill(
      "takes-json",
      `${PROFILE_HEAD}    args: [hi]\n    inputs:\n      doc:\n        type: json\n`,
    );
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const flag = await refused(["skill", ref, "--input-json", `doc=${deep}`]);
    expect(flag).toMatchObject({ reason: "NESTING_TOO_DEEP", limit: 64 });
    expect(flag.path).toMatch(/^inputs\.doc(\[0\]){63}$/);
    ws.write("deep-inputs.json", `{"doc": ${deep}}`);
    expect(await refused(["skill", ref, "--inputs", "deep-inputs.json"])).toMatchObject({
      reason: "NESTING_TOO_DEEP",
      file: "deep-inputs.json",
      line: 1,
      column: 8 + 64,
    });
    ws.write("deep-kernel.json", `{"kind": "admission", "input": ${deep}}`);
    // kernel eval answers in upstream's envelope ({code, message}: cli/commands/kernel.ts).
    const deepKernel = await refused(["kernel", "eval", "--input", "deep-kernel.json"]);
    expect(deepKernel).toMatchObject({ code: "invalid_input" });
    expect(deepKernel.message).toContain("nesting deeper than 64 levels");
  });
});

describe("file size caps", () => {
  it("refuses an X.yaml over 1 MiB before parsing it, naming the file, size and limit", async () => {
    const big = `${PROFILE_HEAD}    args: ["${"a".repeat(80 * MIB)}"]\n`;
    const started = performance.now();
    const error = await refused(["skill", skill("big-profile", big)]);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error).toMatchObject({
      reason: "FILE_TOO_LARGE",
      file: "skills/big-profile/X.yaml",
      size: big.length,
      limit: MIB,
    });
    expect(error.message).toBe("X.yaml is 80.0 MiB; the limit is 1 MiB");
  });

  it("refuses a SKILL.md over 1 MiB", async () => {
    const body = `---\nname: big-skill\n---\n${"manual text\n".repeat(6 * 1024 * 1024)}`;
    expect(await refused(["skill", skill("big-skill", undefined, body)])).toMatchObject({
      reason: "FILE_TOO_LARGE",
      file: "skills/big-skill/SKILL.md",
      limit: MIB,
    });
  });

  it("refuses a standalone graph document over 1 MiB", async () => {
    ws.write("graphs/big.yaml", `name: big\nsteps: []\nnote: "${"n".repeat(2 * MIB)}"\n`);
    expect(await refused(["skill", "graphs/big.yaml"])).toMatchObject({
      reason: "FILE_TOO_LARGE",
      file: "graphs/big.yaml",
      limit: MIB,
    });
  });

  it("refuses a package over 64 MiB in total without reading it", async () => {
    const ref = skill("heavy", `${PROFILE_HEAD}    args: [hi]\n`);
    // A sparse file: 65 MiB by its size, nothing on disk.
    const fd = openSync(join(ws.root, ref, "data.bin"), "w");
    ftruncateSync(fd, 65 * MIB);
    closeSync(fd);
    expect(await refused(["skill", ref])).toMatchObject({
      reason: "FILE_TOO_LARGE",
      file: "skills/heavy/data.bin",
      limit: 64 * MIB,
    });
  });

  it("refuses an X.yaml that is a FIFO or a symlink to /dev/zero, without hanging", async () => {
    const fifo = skill("fifo");
    mkfifoSync(join(ws.root, fifo, "X.yaml"));
    expect(await refused(["skill", fifo])).toMatchObject({
      reason: "PACKAGE_INVALID",
      file: "skills/fifo/X.yaml",
    });
    const zero = skill("zero");
    symlinkSync("/dev/zero", join(ws.root, zero, "X.yaml"));
    expect(await refused(["skill", zero])).toMatchObject({
      reason: "PACKAGE_INVALID",
      file: "skills/zero/X.yaml",
    });
    const skillFifo = "skills/fifo-skill";
    ws.write(`${skillFifo}/X.yaml`, `${PROFILE_HEAD}    args: [hi]\n`);
    mkfifoSync(join(ws.root, skillFifo, "SKILL.md"));
    expect(await refused(["skill", skillFifo])).toMatchObject({
      reason: "PACKAGE_INVALID",
      file: "skills/fifo-skill/SKILL.md",
    });
  });
});

describe("other documents the CLI reads", () => {
  const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;

  it("refuses a deep receipt file and a receipt path that is a device, without hanging", async () => {
    ws.write("deep-receipt.json", `{"schema": "runx.receipt.v1", "metadata": ${deep}}`);
    const r = await runx(ws, ["verify", "--receipt", "deep-receipt.json", "--json"]);
    expect(r.stderr).not.toMatch(/\n\s+at |RangeError|Maximum call stack/);
    expect(JSON.stringify(r.json())).toContain("receipt nests deeper than 256 levels");
    symlinkSync("/dev/zero", join(ws.root, "zero-receipt.json"));
    expect(await refused(["verify", "--receipt", "zero-receipt.json"])).toMatchObject({
      reason: "IO_ERROR",
      file: "zero-receipt.json",
      message: "the receipt file is a device, not a regular file",
    });
  });

  it("refuses a parser request file that is a FIFO and a decision file over its cap", async () => {
    mkfifoSync(join(ws.root, "request.fifo"));
    expect(await refused(["parser", "eval", "--input", "request.fifo"])).toMatchObject({
      reason: "IO_ERROR",
      file: "request.fifo",
    });
    const fd = openSync(join(ws.root, "huge-kernel.json"), "w");
    ftruncateSync(fd, 17 * MIB);
    closeSync(fd);
    // A kernel decision's bound is upstream's 1 MiB (docs/governance.md); kernel eval answers
    // in upstream's envelope ({code, message}: cli/commands/kernel.ts).
    const huge = await refused(["kernel", "eval", "--input", "huge-kernel.json"]);
    expect(huge).toMatchObject({ code: "read_input" });
    expect(huge.message).toContain("is 17 MiB; the limit is 1 MiB");
  });

  it("refuses deep resume answers and an answers file that is a FIFO", async () => {
    const ref = skill("asks", undefined, "---\nname: asks\n---\nAn agent task.\n");
    const paused = await runx(ws, ["skill", ref, "--json"]);
    expect(paused.code, paused.stdout).toBe(2);
    const runId = paused.json<{ run_id: string }>().run_id;
    ws.write("deep-answers.json", `{"answers": ${deep}}`);
    expect(await refused(["resume", runId, "deep-answers.json"])).toMatchObject({
      reason: "NESTING_TOO_DEEP",
      file: "deep-answers.json",
      line: 1,
      column: 13 + 63,
    });
    mkfifoSync(join(ws.root, "answers.fifo"));
    expect(await refused(["resume", runId, "answers.fifo"])).toMatchObject({
      reason: "IO_ERROR",
      file: "answers.fifo",
    });
  });

  it("refuses a project config that is a FIFO or nests too deep", async () => {
    const ref = skill("plain", `${PROFILE_HEAD}    args: [hi]\n`);
    const config = join(ws.root, ".runx", "config.json");
    ws.write(".runx/config.json", `{"policy": ${deep}}`);
    expect(await refused(["skill", ref])).toMatchObject({
      reason: "NESTING_TOO_DEEP",
      file: ".runx/config.json",
    });
    ws.write(".runx/config.json", "{}");
    execFileSync("rm", [config]);
    mkfifoSync(config);
    expect(await refused(["skill", ref])).toMatchObject({
      reason: "IO_ERROR",
      file: ".runx/config.json",
    });
    execFileSync("rm", [config]);
  });
});

describe("deep inputs through the API", () => {
  let api: ApiProcess;
  beforeAll(async () => {
    api = await startApiProcess({
      prepare: (w) => {
        w.write("skills/takes-json/SKILL.md", "---\nname: takes-json\n---\nTakes JSON.\n");
        w.write(
          "skills/takes-json/X.yaml",
          `${PROFILE_HEAD}    args: [hi]\n    inputs:\n      doc:\n        type: json\n`,
        );
      },
    });
  }, 120_000);
  afterAll(async () => {
    await api.cleanup();
  });

  it("answers runs.start with 20,000-deep inputs as unprocessable, naming the key path", async () => {
    const approver = await api.operator("alice", "approver");
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    // Written by hand: JSON.stringify itself recurses and cannot build this body.
    const response = await fetch(`${api.url}/trpc/runs.start`, {
      method: "POST",
      headers: { "content-type": "application/json", ...api.headers(approver) },
      body: `{"skill": "takes-json", "inputs": {"doc": ${deep}}}`,
    });
    const text = await response.text();
    expect(response.status, `${text}\n${api.log.join("\n")}`).toBe(422);
    expect(text).toContain("nesting deeper than 64 levels");
    const data = (JSON.parse(text) as { error: { data: { runtimeCode: string; path: string } } })
      .error.data;
    expect(data.runtimeCode).toBe("NESTING_TOO_DEEP");
    // The request is level 1, `inputs` 2, `doc` 3: the 63rd `[0]` is the 66th container.
    expect(data.path).toMatch(/^inputs\.doc(\[0\]){63}$/);
    expect(text).not.toMatch(/\n\s+at |Maximum call stack/);
    expect(api.alive()).toBe(true);
  });
});
