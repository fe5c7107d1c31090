import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { loadSkillPackage, resolveSkillRef } from "../packages/resolve.js";

const SKILL = "---\nname: demo\ndescription: Demo skill.\n---\n\nDo the demo.\n";
/** Lines 1-4 of most profiles below; row text continues at line 5. */
const HEAD = "skill: demo\nrunners:\n  default:\n    type: cli-tool\n";

interface Row {
  name: string;
  skillMd?: string;
  xYaml?: string;
  code: string;
  file: "SKILL.md" | "X.yaml";
  line: number;
  column: number;
  path: string;
  construct?: string;
  field?: string;
}

// One row per line keeps the table scannable.
// prettier-ignore
const rows: Row[] = [
  { name: "an anchor", xYaml: `${HEAD}    command: &cmd node\n`, code: "YAML_FORBIDDEN", construct: "anchor", file: "X.yaml", line: 5, column: 14, path: "runners.default.command" },
  { name: "an alias", xYaml: `${HEAD}    command: node\n    args: [*cmd]\n`, code: "YAML_FORBIDDEN", construct: "alias", file: "X.yaml", line: 6, column: 12, path: "runners.default.args[0]" },
  { name: "a merge key", xYaml: `${HEAD}    command: node\n    <<: {timeout_seconds: 5}\n`, code: "YAML_FORBIDDEN", construct: "merge_key", file: "X.yaml", line: 6, column: 5, path: "runners.default.<<" },
  { name: "a custom tag", xYaml: `${HEAD}    command: !shell node\n`, code: "YAML_FORBIDDEN", construct: "tag", file: "X.yaml", line: 5, column: 14, path: "runners.default.command" },
  { name: "a !!str tag", xYaml: `${HEAD}    command: !!str node\n`, code: "YAML_FORBIDDEN", construct: "tag", file: "X.yaml", line: 5, column: 14, path: "runners.default.command" },
  { name: "two documents", xYaml: `${HEAD}    command: node\n---\nskill: other\n`, code: "YAML_FORBIDDEN", construct: "multiple_documents", file: "X.yaml", line: 6, column: 1, path: "" },
  { name: "a duplicate key", xYaml: `${HEAD}    command: node\n    command: sh\n`, code: "YAML_FORBIDDEN", construct: "duplicate_key", file: "X.yaml", line: 6, column: 5, path: "runners.default.command" },
  { name: "an explicit key", xYaml: `${HEAD}    ? command\n    : node\n`, code: "YAML_FORBIDDEN", construct: "explicit_key", file: "X.yaml", line: 5, column: 5, path: "runners.default.command" },
  { name: "a plain key with a colon", xYaml: `${HEAD}    command: node\n    env:\n      A:B: x\n`, code: "YAML_FORBIDDEN", construct: "ambiguous_key", file: "X.yaml", line: 7, column: 7, path: "runners.default.env.A:B" },
  { name: "an ambiguous plain scalar (a: b: c)", xYaml: `${HEAD}    command: node: 20\n`, code: "YAML_FORBIDDEN", construct: "ambiguous_scalar", file: "X.yaml", line: 5, column: 14, path: "runners.default.command" },
  { name: "an unquoted yes", xYaml: `${HEAD}    command: node\n    default: yes\n`, code: "YAML_FORBIDDEN", construct: "must_quote_scalar", file: "X.yaml", line: 6, column: 14, path: "runners.default.default" },
  { name: "an unquoted hex number", xYaml: `${HEAD}    command: node\n    timeout_seconds: 0x1F\n`, code: "YAML_FORBIDDEN", construct: "must_quote_scalar", file: "X.yaml", line: 6, column: 22, path: "runners.default.timeout_seconds" },
  { name: "an unquoted sexagesimal", xYaml: `${HEAD}    command: node\n    cwd: 12:30\n`, code: "YAML_FORBIDDEN", construct: "must_quote_scalar", file: "X.yaml", line: 6, column: 10, path: "runners.default.cwd" },
  { name: "an unquoted .inf", xYaml: `${HEAD}    command: node\n    timeout_seconds: .inf\n`, code: "YAML_FORBIDDEN", construct: "must_quote_scalar", file: "X.yaml", line: 6, column: 22, path: "runners.default.timeout_seconds" },
  { name: "an unquoted off in frontmatter", skillMd: "---\nname: demo\nmutating: off\n---\n", code: "YAML_FORBIDDEN", construct: "must_quote_scalar", file: "SKILL.md", line: 3, column: 11, path: "mutating" },
  { name: "an unknown top-level field", xYaml: `skill: demo\ntags: [a]\nrunners:\n  default:\n    type: agent\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 2, column: 1, path: "tags", field: "tags" },
  { name: "an unknown runner field", xYaml: `${HEAD}    command: node\n    comand: nod\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 6, column: 5, path: "runners.default.comand", field: "comand" },
  { name: "instructions on a runner", xYaml: `${HEAD}    command: node\n    instructions: Do the thing.\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 6, column: 5, path: "runners.default.instructions" },
  { name: "two default runners", xYaml: `${HEAD}    command: node\n    default: true\n  other:\n    type: agent\n    default: true\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 9, column: 5, path: "runners.other.default" },
  { name: "a graph with an empty result_from", xYaml: "skill: demo\nrunners:\n  default:\n    type: graph\n    graph:\n      name: g\n      result_from: []\n      steps:\n        - id: a\n          tool: fs.read\n", code: "PROFILE_INVALID", file: "X.yaml", line: 7, column: 7, path: "runners.default.graph.result_from" },
  { name: "a graph whose result_from names no step", xYaml: "skill: demo\nrunners:\n  default:\n    type: graph\n    graph:\n      name: g\n      result_from: [b]\n      steps:\n        - id: a\n          tool: fs.read\n", code: "PROFILE_INVALID", file: "X.yaml", line: 7, column: 21, path: "runners.default.graph.result_from[0]" },
  { name: "non-mapping frontmatter", skillMd: "---\n- a\n- b\n---\nBody\n", code: "FRONTMATTER_INVALID", file: "SKILL.md", line: 2, column: 1, path: "" },
  { name: "missing frontmatter", skillMd: "# Demo\n\nNo frontmatter.\n", code: "FRONTMATTER_INVALID", file: "SKILL.md", line: 1, column: 1, path: "" },
  { name: "unterminated frontmatter", skillMd: "---\nname: demo\n\nBody\n", code: "FRONTMATTER_INVALID", file: "SKILL.md", line: 1, column: 1, path: "" },
  { name: "frontmatter without a name", skillMd: "---\ndescription: x\n---\n", code: "FRONTMATTER_INVALID", file: "SKILL.md", line: 2, column: 1, path: "" },
  { name: "a name mismatch", xYaml: "version: \"0.1.0\"\nskill: other\nrunners:\n  default:\n    type: agent\n", code: "PROFILE_INVALID", file: "X.yaml", line: 2, column: 1, path: "skill" },
  { name: "a bad input type", xYaml: `${HEAD}    command: node\n    inputs:\n      count:\n        type: float\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 8, column: 9, path: "runners.default.inputs.count.type" },
  { name: "a credential on a javascript runner", xYaml: "skill: demo\nrunners:\n  default:\n    type: javascript\n    module: run.mjs\n    credential: api\n", code: "PROFILE_INVALID", file: "X.yaml", line: 6, column: 5, path: "runners.default.credential" },
  { name: "a forbidden runx sub-key", xYaml: `${HEAD}    command: node\n    runx:\n      scopes: [a]\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 7, column: 7, path: "runners.default.runx.scopes" },
  { name: "a harness case naming an undeclared runner", xYaml: "skill: demo\nharness:\n  cases:\n    - name: smoke\n      runner: missing\nrunners:\n  default:\n    type: agent\n", code: "PROFILE_INVALID", file: "X.yaml", line: 5, column: 7, path: "harness.cases[0].runner" },
  { name: "an unknown input definition", xYaml: `${HEAD}    command: node\n    inputs:\n      x: { definition: nope }\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 7, column: 12, path: "runners.default.inputs.x.definition" },
  { name: "an example that breaks the input types", xYaml: `${HEAD}    command: node\n    inputs:\n      count: { type: integer }\n    examples:\n      - count: many\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 9, column: 9, path: "runners.default.examples[0].count" },
  { name: "a cli-tool runner without a command", xYaml: `${HEAD}    args: [x]\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 3, column: 3, path: "runners.default" },
  { name: "a scope that is an empty string", xYaml: `${HEAD}    command: node\n    scopes: [""]\n`, code: "PROFILE_INVALID", file: "X.yaml", line: 6, column: 14, path: "runners.default.scopes[0]" },
];

describe("malformed packages", () => {
  let workspace: string;
  beforeAll(async () => {
    workspace = await mkdtemp(path.join(tmpdir(), "runx-malformed-"));
  });
  afterAll(async () => {
    await rm(workspace, { recursive: true, force: true });
  });

  it("covers at least 24 cases", () => {
    expect(rows.length).toBeGreaterThanOrEqual(24);
  });

  it.each(rows.map((row, index) => [row.name, row, index] as const))(
    "refuses %s",
    async (_name, row, index) => {
      const dir = path.join(workspace, `pkg-${index}`);
      await mkdir(dir);
      await writeFile(path.join(dir, "SKILL.md"), row.skillMd ?? SKILL);
      if (row.xYaml !== undefined) await writeFile(path.join(dir, "X.yaml"), row.xYaml);
      const error = await loadSkillPackage(
        await resolveSkillRef(`pkg-${index}`, { workspaceRoot: workspace }),
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RuntimeError);
      const { code, details } = error as RuntimeError;
      expect({
        code,
        file: details.file,
        line: details.line,
        column: details.column,
        path: details.path,
      }).toEqual({
        code: row.code,
        file: `pkg-${index}/${row.file}`,
        line: row.line,
        column: row.column,
        path: row.path,
      });
      if (row.construct !== undefined) expect(details.construct).toBe(row.construct);
      if (row.field !== undefined) expect(details.field).toBe(row.field);
    },
  );
});
