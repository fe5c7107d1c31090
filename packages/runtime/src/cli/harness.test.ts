import { chmodSync, cpSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canonicalJson, receiptBodyDigest, receiptFullDigest } from "../receipts/index.js";
import type { HarnessReport } from "../harness/index.js";
import type { Receipt } from "../receipts/index.js";
import { cleanEnv, makeWorkspace, REPO_ROOT, RUNX_BIN, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

const UPSTREAM = join(REPO_ROOT, "..", "shared", "conformance", "runx-upstream");

type Report = HarnessReport;

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-harness-");
});
afterEach(() => ws.cleanup());

function leftovers(): string[] {
  const dir = join(ws.root, ".runx", "harness");
  return existsSync(dir) ? readdirSync(dir) : [];
}

/** A package whose runner fails loudly when a previous case left its marker file behind. */
function markerPackage(caseOrder: string[]): void {
  ws.write("pkgs/marker/SKILL.md", "---\nname: marker\ndescription: Leaves a marker file.\n---\n");
  ws.write(
    "pkgs/marker/mark.sh",
    "if [ -e marker ]; then printf '{\"fresh\":false}'; else touch marker; printf '{\"fresh\":true}'; fi\n",
  );
  const cases = caseOrder
    .map(
      (name) =>
        `    - name: ${name}\n      expect:\n        status: sealed\n        output:\n          exact: {fresh: true}\n`,
    )
    .join("");
  ws.write(
    "pkgs/marker/X.yaml",
    `skill: marker\nrunners:\n  default:\n    default: true\n    type: cli-tool\n    command: sh\n    args: [./mark.sh]\n    input_mode: none\nharness:\n  cases:\n${cases}`,
  );
}

describe("runx harness", () => {
  it("keeps harness receipts out of history unless --include-harness is given", async () => {
    ws.addBundledSkill("echo");
    const live = await runx(ws, ["skill", "skills/echo", "--message", "live", "--json"]);
    expect(live.code).toBe(0);
    const h = await runx(ws, ["harness", "skills/echo", "--json"]);
    expect(h.code).toBe(0);
    const harnessIds = h.json<{ receipt_ids: string[] }>().receipt_ids;
    expect(harnessIds.length).toBeGreaterThan(0);
    const plain = (await runx(ws, ["history", "--json"])).json<{
      receipts: Array<{ id: string }>;
    }>();
    expect(plain.receipts.map((r) => r.id)).toEqual([String(live.json().receipt_id)]);
    const all = (await runx(ws, ["history", "--include-harness", "--json"])).json<{
      receipts: Array<{ id: string }>;
    }>();
    expect(all.receipts.map((r) => r.id)).toEqual(expect.arrayContaining(harnessIds));
  });

  it("says where harness receipts went when history of a harness-only store is empty", async () => {
    ws.addBundledSkill("echo");
    expect((await runx(ws, ["harness", "skills/echo", "--json"])).code).toBe(0);
    const plain = await runx(ws, ["history"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^no receipts in .*--include-harness\)\n$/);
    const all = await runx(ws, ["history", "--include-harness"]);
    expect(all.stdout).not.toContain("no receipts");
  });

  it("passes the bundled echo package's fixtures and keeps their receipts", async () => {
    ws.addBundledSkill("echo");
    const r = await runx(ws, ["harness", "skills/echo", "--json"]);
    expect(r.code).toBe(0);
    const report = r.json<Report>();
    expect(report).toMatchObject({
      status: "passed",
      case_count: 2,
      assertion_error_count: 0,
      assertion_errors: [],
      case_names: ["echo-message", "echo-unicode"],
      graph_case_count: 0,
    });
    expect(report.receipt_ids).toHaveLength(2);
    for (const id of report.receipt_ids) {
      expect(existsSync(join(ws.root, ".runx", "receipts", `sha256-${id.slice(7)}.json`))).toBe(
        true,
      );
    }
    expect(leftovers()).toEqual([]);
    expect((await runx(ws, ["verify", "--json"])).code).toBe(0);
  });

  it("fails a case whose expectation is wrong and names the differing path", async () => {
    ws.addBundledSkill("echo");
    const file = "skills/echo/fixtures/echo-message.yaml";
    ws.write(
      file,
      ws.read(file).replace("exact:\n      message: hello", "exact:\n      message: goodbye"),
    );
    const r = await runx(ws, ["harness", "skills/echo", "--json"]);
    expect(r.code).toBe(1);
    const report = r.json<Report>();
    expect(report.status).toBe("failed");
    expect(report.assertion_error_count).toBe(1);
    expect(report.assertion_errors[0]).toContain(`${file}: expect.output.message`);
    expect(report.assertion_errors[0]).toContain('"goodbye from the echo fixture"');
    const human = await runx(ws, ["harness", "skills/echo"]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain("✗ echo-message");
    expect(human.stdout).toContain("expect.output.message");
    expect(human.stdout).toContain("✓ echo-unicode");
    expect(leftovers()).toEqual([]);
  });

  // Every package in the repository's skills/ ships fixtures, and all of them pass.
  it.each(readdirSync(join(REPO_ROOT, "skills")).sort())(
    "passes every fixture of the bundled %s package",
    async (name) => {
      ws.addBundledSkill(name);
      const fixtures = readdirSync(join(REPO_ROOT, "skills", name, "fixtures")).filter((f) =>
        f.endsWith(".yaml"),
      );
      expect(fixtures.length).toBeGreaterThan(0);
      const r = await runx(ws, ["harness", `skills/${name}`, "--json"]);
      expect(r.code).toBe(0);
      const report = r.json<Report>();
      expect(report.status).toBe("passed");
      expect(report.case_count).toBeGreaterThanOrEqual(fixtures.length);
    },
  );

  it("answers a graph's agent pause and provider-effect gate from caller and checks its steps", async () => {
    ws.addBundledSkill("review-and-record");
    const file = "skills/review-and-record/fixtures/approved.yaml";
    ws.write(
      file,
      `${ws.read(file)}  receipt:\n    state: sealed\n    disposition: closed\n    child_receipt_count: 3\n`,
    );
    const r = await runx(ws, ["harness", "skills/review-and-record", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<Report>()).toMatchObject({
      status: "passed",
      case_names: ["approved"],
      graph_case_count: 1,
    });
    expect(leftovers()).toEqual([]);
  });

  it("ends a case needs_agent when a pause has no supplied answer and flags unconsumed answers", async () => {
    ws.addBundledSkill("review-and-record");
    const file = "skills/review-and-record/fixtures/approved.yaml";
    ws.write(
      file,
      ws
        .read(file)
        .replace(/ {2}approvals:\n.*\n.*\n/, "")
        .replace("caller:\n  answers:\n", "caller:\n  answers:\n    input.never.asked: {x: 1}\n"),
    );
    const r = await runx(ws, ["harness", "skills/review-and-record", "--json"]);
    expect(r.code).toBe(1);
    const errors = r.json<Report>().assertion_errors;
    expect(
      errors.some((e) => e.includes('expect.status: expected "sealed", got "needs_agent"')),
    ).toBe(true);
    expect(errors.some((e) => e.includes("caller.answers.input.never.asked.replayed"))).toBe(true);
  });

  it("replays upstream's echo-skill fixture to the oracle receipt, digests included", async () => {
    cpSync(
      join(UPSTREAM, "fixtures", "skills", "echo"),
      join(ws.root, "fixtures", "skills", "echo"),
      {
        recursive: true,
      },
    );
    chmodSync(join(ws.root, "fixtures", "skills", "echo"), 0o755);
    cpSync(
      join(REPO_ROOT, "fixtures", "conformance-scripts", "skills", "echo", "run.sh"),
      join(ws.root, "fixtures", "skills", "echo", "run.sh"),
    );
    cpSync(
      join(UPSTREAM, "fixtures", "harness", "echo-skill.yaml"),
      join(ws.root, "fixtures", "harness", "echo-skill.yaml"),
    );
    const r = await runx(ws, [
      "harness",
      "fixtures/harness/echo-skill.yaml",
      "--json",
      "--receipt-dir",
      "out/receipts",
    ]);
    expect(r.code).toBe(0);
    // A passing standalone fixture prints its sealed receipt itself.
    const receipt = r.json<Receipt>();
    expect(receipt.schema).toBe("runx.receipt.v1");
    const oracle = readFileSync(
      join(UPSTREAM, "fixtures", "harness", "oracle", "echo-skill.receipt.json"),
      "utf8",
    ).trim();
    expect(canonicalJson(receipt)).toBe(oracle);
    expect(receiptBodyDigest(receipt)).toBe(
      "sha256:241eef460b2874a93faa907ffd50b2d25ee09c8361deec73284aabaacaef317b",
    );
    expect(receiptFullDigest(receipt)).toBe(
      "sha256:b76412293fc8e168854a122a31c7449edb40053c503118bb4a68e3a670c5dd6e",
    );
    expect(ws.files("out/receipts")).toContain(`out/receipts/sha256-${receipt.id.slice(7)}.json`);
  });

  it("shows a progress line on a terminal, and none with --json", () => {
    ws.addBundledSkill("echo");
    // util-linux `script` gives the CLI a pseudo-terminal for stdout and stderr.
    const onTty = (args: string) =>
      spawnSync("script", ["-qec", `${process.execPath} ${RUNX_BIN} ${args}`, "/dev/null"], {
        cwd: ws.root,
        env: cleanEnv(ws),
        encoding: "utf8",
      });
    const human = onTty("harness skills/echo");
    expect(human.status).toBe(0);
    expect(human.stdout).toContain("runx harness: 1 case(s) done, last ✓ echo-message");
    expect(human.stdout).toContain("runx harness: 2 case(s) done, last ✓ echo-unicode");
    const json = onTty("harness skills/echo --json");
    expect(json.status).toBe(0);
    expect(json.stdout).not.toContain("case(s) done");
  });

  it("isolates cases: two cases that collide on a file pass in either order and leave nothing behind", async () => {
    for (const order of [
      ["first", "second"],
      ["second", "first"],
    ]) {
      markerPackage(order);
      const r = await runx(ws, ["harness", "pkgs/marker", "--json"]);
      expect(r.code).toBe(0);
      expect(r.json<Report>()).toMatchObject({ status: "passed", case_names: order });
      expect(leftovers()).toEqual([]);
      expect(existsSync(join(ws.root, "pkgs", "marker", "marker"))).toBe(false);
    }
  });

  it("runs a package that is the workspace root and a target-less agent_task fixture", async () => {
    markerPackage(["only"]);
    for (const name of ["SKILL.md", "X.yaml", "mark.sh"]) {
      ws.write(name, ws.read(`pkgs/marker/${name}`));
    }
    ws.write(
      "cases/triage.yaml",
      "name: triage\nkind: agent_task\nrunner: triage\ninputs: {title: crash}\ncaller:\n  answers:\n    agent_task.triage.output: {label: bug}\nexpect:\n  status: sealed\n  output:\n    exact: {label: bug}\n",
    );
    const r = await runx(ws, ["harness", ".", "cases/triage.yaml", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<Report>()).toMatchObject({ status: "passed", case_names: ["only", "triage"] });
    expect(leftovers()).toEqual([]);
  });

  it("ends a case failure when a required input is missing (no one can answer it)", async () => {
    ws.addBundledSkill("echo");
    ws.write(
      "skills/echo/fixtures/no-input.yaml",
      "name: no-input\nkind: skill\ntarget: ..\ninputs: {}\nexpect:\n  status: needs_agent\n",
    );
    const r = await runx(ws, ["harness", "skills/echo", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json<Report>().assertion_errors).toEqual([
      expect.stringContaining('expect.status: expected "needs_agent", got "failure"'),
    ]);
  });
});

describe("graph refusals before execution end a case with a status", () => {
  const graphCase = (name: string, status: string) =>
    `name: ${name}\nkind: graph\ntarget: flows/${name}.yaml\nexpect:\n  status: ${status}\n`;

  it("a mutating retry without an idempotency key is a policy denial with a sealed refusal receipt", async () => {
    ws.addBundledSkill("echo");
    ws.write(
      "flows/retry-no-key.yaml",
      [
        "name: retry-no-key",
        "owner: runx",
        "steps:",
        "  - id: deploy",
        "    skill: ../skills/echo",
        "    mutation: true",
        "    inputs: {message: deploy}",
        "    retry: {max_attempts: 2, backoff_ms: 0}",
        "",
      ].join("\n"),
    );
    ws.write(
      "case.yaml",
      `${graphCase("retry-no-key", "policy_denied")}  receipt:\n    schema: runx.receipt.v1\n`,
    );
    const r = await runx(ws, ["harness", "case.yaml", "--json"]);
    expect(r.code).toBe(0);
    const receipt = r.json<Receipt>();
    expect(receipt.schema).toBe("runx.receipt.v1");
    expect(receipt.seal.disposition).toBe("blocked");
    expect(JSON.stringify(receipt)).toContain("declares mutating retry without an idempotency key");
    // The same refusal read as a failure is a failed expectation, not a process error.
    ws.write("case.yaml", graphCase("retry-no-key", "failure"));
    const wrong = await runx(ws, ["harness", "case.yaml", "--json"]);
    expect(wrong.code).toBe(1);
    expect(wrong.json<Report>().assertion_errors[0]).toContain(
      'expect.status: expected "failure", got "policy_denied"',
    );
  });

  it("a mutating retry declared by the step's skill needs the key too", async () => {
    ws.write("pkgs/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploys.\n---\n");
    ws.write(
      "pkgs/deploy/X.yaml",
      [
        "skill: deploy",
        "runners:",
        "  default:",
        "    default: true",
        "    type: cli-tool",
        "    command: sh",
        "    args: [-c, 'printf {}']",
        "    mutating: true",
        "    retry: {max_attempts: 3}",
        "",
      ].join("\n"),
    );
    const flow = (key: string) =>
      [
        "name: skill-retry",
        "owner: runx",
        "steps:",
        "  - id: deploy",
        "    skill: ../pkgs/deploy",
        ...(key === "" ? [] : [`    idempotency_key: ${key}`]),
        "",
      ].join("\n");
    ws.write("flows/skill-retry.yaml", flow(""));
    ws.write(
      "case.yaml",
      `${graphCase("skill-retry", "policy_denied")}  receipt:\n    schema: runx.receipt.v1\n`,
    );
    const denied = await runx(ws, ["harness", "case.yaml", "--json"]);
    expect(denied.code).toBe(0);
    expect(denied.json<Receipt>().seal.disposition).toBe("blocked");
    ws.write("flows/skill-retry.yaml", flow("deploy-1"));
    ws.write("case.yaml", graphCase("skill-retry", "sealed"));
    const admitted = await runx(ws, ["harness", "case.yaml", "--json"]);
    expect(admitted.code).toBe(0);
    expect(admitted.json<Receipt>().seal.disposition).toBe("closed");
  });

  it("a step with an unknown run type fails the graph; it is not a policy denial", async () => {
    ws.write(
      "flows/bad-run.yaml",
      [
        "name: bad-run",
        "owner: runx",
        "steps:",
        "  - id: a",
        "    run:",
        "      type: teleport",
        "",
      ].join("\n"),
    );
    ws.write(
      "case.yaml",
      `${graphCase("bad-run", "failure")}  receipt:\n    schema: runx.receipt.v1\n`,
    );
    const r = await runx(ws, ["harness", "case.yaml", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<Receipt>().seal.disposition).toBe("failed");
  });

  it("a fanout branch naming a missing skill fails as a branch and seals the graph failed", async () => {
    ws.addBundledSkill("echo");
    ws.write(
      "flows/fan-missing.yaml",
      [
        "name: fan-missing",
        "owner: runx",
        "steps:",
        "  - id: found",
        "    skill: ../skills/echo",
        "    fanout_group: g",
        "    inputs: {message: a}",
        "  - id: missing",
        "    skill: ../skills/no-such-skill",
        "    fanout_group: g",
        "    inputs: {message: b}",
        "fanout:",
        "  groups:",
        "    g: {strategy: all}",
        "",
      ].join("\n"),
    );
    ws.write("case.yaml", graphCase("fan-missing", "failure"));
    const r = await runx(ws, ["harness", "case.yaml", "--json"]);
    // A passing single case prints its sealed receipt.
    expect(r.code).toBe(0);
    expect(r.json<Receipt>().seal).toMatchObject({
      disposition: "failed",
      reason_code: "fanout_halted",
    });
    const skill = await runx(ws, ["skill", "flows/fan-missing.yaml", "--json"]);
    expect(skill.json()).toMatchObject({
      status: "sealed",
      outcome: "failed",
      closure: { disposition: "failed", reason_code: "fanout_halted" },
    });
  });
});
