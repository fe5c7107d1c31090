/**
 * An X.yaml in a directory without its own SKILL.md is an execution profile owned by the
 * nearest ancestor package (packages/locate.ts): a graph step `skill: ./graph/stage` runs it
 * under the profile's own skill name, it runs directly too, and a profile with no owner inside
 * the workspace is refused by name.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

const STAGE = [
  "skill: top-stage",
  "runners:",
  "  default:",
  "    default: true",
  "    type: cli-tool",
  "    command: echo",
  '    args: ["staged"]',
  "",
].join("\n");

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-owned-profile-");
  ws.write(
    "skills/top/SKILL.md",
    "---\nname: top\ndescription: A graph with a stage.\n---\nTop.\n",
  );
  ws.write(
    "skills/top/X.yaml",
    [
      "skill: top",
      "runners:",
      "  main:",
      "    default: true",
      "    type: graph",
      "    graph:",
      "      name: top",
      "      steps:",
      "        - id: one",
      "          skill: ./graph/stage",
      "",
    ].join("\n"),
  );
  ws.write("skills/top/graph/stage/X.yaml", STAGE);
});
afterEach(() => ws.cleanup());

interface Envelope {
  status: string;
  skill_name: string;
  result: { stdout?: string };
  error?: { reason: string; message: string; file?: string };
}

describe("owned execution profiles", () => {
  it("runs a graph stage that has only an X.yaml, and the stage on its own, each as itself", async () => {
    const graph = await runx(ws, ["skill", "skills/top", "--json"]);
    expect(graph.code).toBe(0);
    expect(graph.json<Envelope>().result.stdout).toBe("staged\n");
    // The owner's parsed package is cached under the same digest; the stage must not read it.
    const stage = await runx(ws, ["skill", "skills/top/graph/stage", "--json"]);
    expect(stage.code).toBe(0);
    const env = stage.json<Envelope>();
    expect(env.skill_name).toBe("top-stage");
    expect(env.result.stdout).toBe("staged\n");
  });

  it("refuses a profile with no owning SKILL.md inside the workspace", async () => {
    ws.write("loose/X.yaml", STAGE);
    const run = await runx(ws, ["skill", "./loose", "--json"]);
    expect(run.code).not.toBe(0);
    const env = run.json<Envelope>();
    expect(env.error?.reason).toBe("PACKAGE_NOT_FOUND");
    expect(env.error?.message).toContain("no owning SKILL.md");
    expect(env.error?.file).toBe("loose/X.yaml");
  });
});
