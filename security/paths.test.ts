/**
 * Path forms against the API's skill inputs, through the built API process: `runs.start` and
 * `skills.get` take only catalog entries (workspace skills under `skills/`, registry records by
 * name). A host path, `..`, `skills/../..`, a graph document outside the workspace and a
 * symlinked package are refused before anything runs, with one answer whether or not the path
 * exists, and no run is recorded; a catalog skill still runs.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { data, mutate, query, startApiProcess } from "./kit.js";
import type { Answer, ApiProcess, Session } from "./kit.js";

let api: ApiProcess;
let approver: Session;
/** A directory beside the workspace, where the hostile packages live. */
let outside: string;
/** What the hostile packages write when they run. */
let marker: string;

function evilPackage(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), "---\nname: evilskill\ndescription: evil\n---\n# evil\n");
  writeFileSync(
    join(dir, "X.yaml"),
    [
      "skill: evilskill",
      'version: "0.1.0"',
      "runners:",
      "  default:",
      "    default: true",
      "    type: cli-tool",
      "    command: /bin/sh",
      `    args: ["-c", "echo pwned > ${marker}"]`,
      "",
    ].join("\n"),
  );
}

function evilGraph(file: string): void {
  writeFileSync(
    file,
    [
      "name: evilgraph",
      "steps:",
      "  - id: pwn",
      "    run:",
      "      type: cli-tool",
      "      command: /bin/sh",
      `      args: ["-c", "echo pwned > ${marker}"]`,
      "",
    ].join("\n"),
  );
}

beforeAll(async () => {
  api = await startApiProcess({
    prepare: (ws) => {
      outside = join(dirname(ws.root), "outside");
      marker = join(outside, "pwned.txt");
      evilPackage(join(outside, "evilskill"));
      evilGraph(join(outside, "evil-graph.yaml"));
      ws.addBundledSkill("echo");
      symlinkSync(join(outside, "evilskill"), join(ws.root, "skills", "linked"));
      // A catalog graph whose step names the symlinked sibling.
      ws.write("skills/hop/SKILL.md", "---\nname: hop\ndescription: hop\n---\n# hop\n");
      ws.write(
        "skills/hop/X.yaml",
        [
          "skill: hop",
          "runners:",
          "  default:",
          "    default: true",
          "    type: graph",
          "    graph:",
          "      name: hop",
          "      steps:",
          "        - id: nested",
          "          skill: ../linked",
          "",
        ].join("\n"),
      );
    },
  });
  approver = await api.operator("alice", "approver");
}, 120_000);

afterAll(async () => {
  await api.cleanup();
});

function start(skill: string): Promise<Answer> {
  return mutate(api.url, "runs.start", { skill, inputs: {} }, api.headers(approver));
}

/** The tRPC error of an answer: HTTP status, code and message (no stack). */
function failure(answer: Answer): { status: number; code: string; message: string } {
  const body = answer.body as { error?: { message?: string; data?: { code?: string } } };
  return {
    status: answer.status,
    code: body.error?.data?.code ?? "none",
    message: body.error?.message ?? JSON.stringify(answer.body),
  };
}

const HOSTILE = (): string[] => [
  join(outside, "evilskill"),
  "../outside/evilskill",
  "skills/../../outside/evilskill",
  join(outside, "evil-graph.yaml"),
  "../outside/evil-graph.yaml",
  "skills/linked",
  join(outside, "evilskill", "SKILL.md"),
  `/proc/self/root${join(outside, "evilskill")}`,
];

describe("runs.start runs only catalog entries", () => {
  it("refuses host paths, '..', graph documents and symlinked packages; nothing runs", async () => {
    const seen = new Set<string>();
    for (const ref of HOSTILE()) {
      const answer = failure(await start(ref));
      expect(answer.status, ref).toBe(404);
      expect(answer.code, ref).toBe("NOT_FOUND");
      expect(answer.message, ref).not.toContain(outside);
      seen.add(answer.message);
    }
    // The same answer for a path that exists and one that does not.
    seen.add(failure(await start(join(outside, "no-such-skill"))).message);
    seen.add(failure(await start("../outside/no-such-skill")).message);
    expect([...seen]).toHaveLength(1);
    expect(existsSync(marker)).toBe(false);
    const runs = data<{ items: unknown[] }>(
      await query(api.url, "runs.list", {}, api.headers(approver)),
    );
    expect(runs.items).toEqual([]);
    expect(api.alive()).toBe(true);
  });

  it("still starts a workspace skill by its catalog ref or name", async () => {
    for (const skill of ["skills/echo", "echo"]) {
      const started = data<{ runId: string; envelope?: { outcome?: string } }>(
        await mutate(
          api.url,
          "runs.start",
          { skill, inputs: { message: "hi" } },
          api.headers(approver),
        ),
      );
      expect(started.runId).toMatch(/^run_console_/);
    }
  });
});

describe("a catalog graph cannot reach a package outside the workspace", () => {
  it("refuses a nested step whose sibling package is a symlink out of the workspace", async () => {
    const answer = await mutate(
      api.url,
      "runs.start",
      { skill: "skills/hop", inputs: {} },
      api.headers(approver),
    );
    const body = answer.body as { error?: { message?: string; data?: { runtimeCode?: string } } };
    expect(answer.status).toBe(400);
    expect(body.error?.data?.runtimeCode).toBe("PATH_ESCAPE");
    expect(body.error?.message).toBe("step nested: skill ../linked is outside the workspace");
    expect(existsSync(marker)).toBe(false);
    expect(api.alive()).toBe(true);
  });
});

describe("skills.get answers only for catalog entries", () => {
  it("gives one answer for every hostile path, existing or not", async () => {
    const seen = new Set<string>();
    for (const ref of [...HOSTILE(), join(outside, "no-such-skill")]) {
      const answer = failure(
        await query(api.url, "skills.get", { skill: ref }, api.headers(approver)),
      );
      expect(answer.code, ref).toBe("NOT_FOUND");
      seen.add(answer.message);
    }
    expect([...seen]).toHaveLength(1);
  });
});
