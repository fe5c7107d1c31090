/**
 * Terminal injection: text that skills, packages and fixtures control (inputs echoed back,
 * results, summaries, skill names and descriptions) reaches the operator's terminal through
 * the CLI; no escape sequence or bidi override in it may reach the terminal raw
 * (packages/runtime/src/cli/terminal-safe.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "./kit.js";
import type { Workspace } from "./kit.js";

// Clear screen, set the window title (OSC), a C1 CSI, a carriage return that would let the
// rest overwrite the line, a right-to-left override, and OSC 52 (write the clipboard).
const HOSTILE = "\u001b[2J\u001b]0;pwned\u0007\u009b31m\rsealed\u202eevil\u001b]52;c;aGk=\u0007";

/** Any character that can steer a terminal, other than newline and tab. */
// eslint-disable-next-line no-control-regex
const STEERING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-sec-term-");
  ws.addBundledSkill("echo");
});
afterEach(() => ws.cleanup());

describe("what the CLI prints cannot steer the terminal", () => {
  it("a run's text output spells out escape sequences from the skill's result", async () => {
    const r = await runx(ws, ["skill", "skills/echo", "--message", HOSTILE]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("\\u001b[2J");
    expect(r.stdout).not.toMatch(STEERING);
    expect(r.stderr).not.toMatch(STEERING);
  });

  it("--json output stays one valid document with the exact value", async () => {
    const r = await runx(ws, ["skill", "skills/echo", "--message", HOSTILE, "--json"]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(STEERING);
    const doc = r.json<{ result: { message: string } }>();
    expect(doc.result.message).toBe(HOSTILE);
  });

  it("history and list print names and descriptions from packages safely", async () => {
    ws.write(
      "skills/sly/SKILL.md",
      `---\nname: sly\ndescription: "looks fine\\u001b[2K\\rsealed \\u202eok"\n---\nA skill.\n`,
    );
    ws.write(
      "skills/sly/X.yaml",
      "skill: sly\nrunners:\n  default:\n    default: true\n    type: cli-tool\n    command: cat\n    input_mode: stdin\n    timeout_seconds: 10\n    inputs:\n      message:\n        type: string\n        required: true\n    outputs:\n      message: string\n",
    );
    const run = await runx(ws, ["skill", "skills/sly", "--message", HOSTILE]);
    expect(run.code).toBe(0);
    const list = await runx(ws, ["list", "skills"]);
    expect(list.stdout + list.stderr).toContain("looks fine");
    expect(list.stdout + list.stderr).not.toMatch(STEERING);
    const history = await runx(ws, ["history"]);
    expect(history.code).toBe(0);
    expect(history.stdout).not.toMatch(STEERING);
    const id = run.stdout.match(/run_id: (\S+)/)?.[1];
    expect(id).toBeDefined();
    const detail = await runx(ws, ["history", "--detail", id!]);
    expect(detail.code).toBe(0);
    expect(detail.stdout).not.toMatch(STEERING);
  });

  it("a failure message quoting hostile input is spelled out on stderr", async () => {
    const r = await runx(ws, ["skill", `skills/no-such\u001b]0;x\u0007`]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("runx:");
    expect(r.stderr).not.toMatch(STEERING);
  });
});
