/**
 * Process escape: a skill's processes end with its run, however they try to leave it. The
 * skill starts `setsid sh -c "sleep <marker>" &` (a new session and process group, outside the
 * supervisor's group kill) and the test looks for that command line in /proc after the run
 * ended by timeout, by SIGHUP to the CLI, by the API stopping, and by the API being killed
 * (the next start reaps what the dead process left).
 */
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { data, makeWorkspace, mutate, query, runx, startApiProcess } from "./kit.js";
import type { ApiProcess, Workspace } from "./kit.js";
import { pollUntil, processAlive } from "../packages/runtime/src/testing/cli.js";

let counter = 0;
/** A unique `sleep` duration to find the escapee by its command line. */
function marker(): string {
  counter += 1;
  return `1003${process.pid % 10_000}${counter}`;
}

/** Pids of live processes whose command line is exactly `sleep <marker>`. */
function withMarker(mark: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0");
      if (argv[0] === "sleep" && argv[1] === mark && processAlive(Number(name))) {
        found.push(Number(name));
      }
    } catch {
      // gone while we looked
    }
  }
  return found;
}

/** A skill `skills/<name>` whose process leaves its session, then waits `seconds`. */
function escapingSkill(ws: Workspace, name: string, mark: string, timeout: number): void {
  ws.write(`skills/${name}/SKILL.md`, `---\nname: ${name}\ndescription: escapes\n---\n# ${name}\n`);
  ws.write(
    `skills/${name}/escape.sh`,
    `setsid sh -c "sleep ${mark}" </dev/null >/dev/null 2>&1 &\nexec sleep 600\n`,
  );
  ws.write(
    `skills/${name}/X.yaml`,
    [
      `skill: ${name}`,
      'version: "0.1.0"',
      "runners:",
      "  default:",
      "    default: true",
      "    type: cli-tool",
      "    command: sh",
      "    args: [escape.sh]",
      `    timeout_seconds: ${timeout}`,
      "",
    ].join("\n"),
  );
}

describe("process escape through the built CLI", () => {
  let ws: Workspace;
  beforeAll(() => {
    ws = makeWorkspace("runx-sec-escape-");
  });
  afterAll(() => ws.cleanup());

  it("a timed-out run leaves no escaped process behind", async () => {
    const mark = marker();
    escapingSkill(ws, "timeout", mark, 1);
    const r = await runx(ws, ["skill", "skills/timeout", "--json"]);
    const out = r.json<{ closure: { disposition: string } }>();
    expect(out.closure.disposition).toBe("timed_out");
    await pollUntil(() => withMarker(mark).length === 0, { what: `no sleep ${mark}` });
  });

  it("SIGHUP to the CLI kills the skill's whole tree, seals it killed, and exits 130", async () => {
    const mark = marker();
    escapingSkill(ws, "hangup", mark, 60);
    const r = await runx(ws, ["skill", "skills/hangup", "--json"], {
      onSpawn: (child) => {
        void pollUntil(() => withMarker(mark).length > 0, {
          timeoutMs: 10_000,
          what: `sleep ${mark} to start`,
        }).then(() => child.kill("SIGHUP"));
      },
    });
    expect(r.code).toBe(130);
    expect(r.json<{ closure: { disposition: string } }>().closure.disposition).toBe("killed");
    await pollUntil(() => withMarker(mark).length === 0, { what: `no sleep ${mark}` });
  });
});

describe("process escape through the API process", () => {
  let api: ApiProcess;
  const marks = { stop: marker(), kill: marker() };

  beforeAll(async () => {
    api = await startApiProcess({
      prepare: (ws) => {
        escapingSkill(ws, "onstop", marks.stop, 60);
        escapingSkill(ws, "onkill", marks.kill, 60);
      },
    });
  }, 120_000);
  afterAll(async () => {
    await api.cleanup();
  });

  async function startEscaping(skill: string, mark: string): Promise<string> {
    const approver = await api.operator(`op${mark}`, "approver");
    const started = data<{ runId: string; state: string }>(
      await mutate(api.url, "runs.start", { skill, inputs: {} }, api.headers(approver)),
    );
    expect(started.state).toBe("running");
    await pollUntil(() => withMarker(mark).length > 0, { timeoutMs: 10_000, what: "the escapee" });
    return started.runId;
  }

  it("stopping the API (SIGTERM) leaves no escaped process behind", async () => {
    await startEscaping("onstop", marks.stop);
    await api.stop();
    await pollUntil(() => withMarker(marks.stop).length === 0, { what: `no sleep ${marks.stop}` });
    await api.restart();
  }, 60_000);

  it("a SIGKILLed API's escaped processes are killed when it starts again", async () => {
    await startEscaping("onkill", marks.kill);
    api.child.kill("SIGKILL");
    await pollUntil(() => !api.alive(), { what: "the API to die" });
    await api.restart();
    await pollUntil(() => withMarker(marks.kill).length === 0, { what: `no sleep ${marks.kill}` });
    const admin = await api.operator("after", "viewer");
    expect((await query(api.url, "auth.me", undefined, api.headers(admin))).status).toBe(200);
  }, 60_000);
});
