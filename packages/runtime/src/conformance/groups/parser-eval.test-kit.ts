/**
 * Parser fixtures (`parser-eval`): each `fixtures/parser/<scope>/*.json` becomes the request
 * `{"inputs": [{kind, ...input}], "returnErrors": true}` for `runx parser eval --input <file>
 * --json`; `result.value[0]` must equal `expected.validated`, or fail as `expected.rejection`
 * says (kind parse ↔ code parse_error; validation messages are compared verbatim).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { UPSTREAM, type CaseRow, type Verdict } from "../corpus.test-kit.js";
import { makeWorkspace, runx } from "../../testing/cli.js";

interface ParserFixture {
  scope?: string;
  input?: Record<string, unknown>;
  expected?: {
    validated?: unknown;
    rejection?: { kind?: string; message?: string };
  };
}

interface Outcome {
  status?: string;
  value?: unknown;
  error?: { code?: string; message?: string };
}

const KIND_BY_SCOPE: Record<string, string> = {
  skills: "parser.validateSkillMarkdown",
  graphs: "parser.validateGraphYaml",
  "runner-manifests": "parser.validateRunnerManifestYaml",
  installs: "parser.validateSkillInstall",
};

/** The request kind for a fixture: from its scope, else from the shape of its input. */
function kindOf(fixture: ParserFixture, scope: string): string | undefined {
  const input = fixture.input ?? {};
  if (typeof input.kind === "string") return input.kind;
  if (scope === "tool-manifests")
    return "json" in input ? "parser.validateToolManifestJson" : "parser.validateToolManifestYaml";
  const byScope = KIND_BY_SCOPE[scope];
  if (byScope !== undefined) return byScope;
  if ("markdown" in input)
    return "origin" in input ? "parser.validateSkillInstall" : "parser.validateSkillMarkdown";
  if ("json" in input) return "parser.validateToolManifestJson";
  return undefined;
}

/** The first place two JSON values differ, as `path: got … expected …`. */
function firstDifference(got: unknown, want: unknown, path = "value"): string {
  if (isDeepStrictEqual(got, want)) return "";
  const bothObjects =
    typeof got === "object" && got !== null && typeof want === "object" && want !== null;
  if (bothObjects && Array.isArray(got) === Array.isArray(want)) {
    const g = got as Record<string, unknown>;
    const w = want as Record<string, unknown>;
    for (const key of new Set([...Object.keys(w), ...Object.keys(g)])) {
      if (!(key in g)) return `${path}.${key} missing`;
      if (!(key in w)) return `${path}.${key} unexpected`;
      const diff = firstDifference(g[key], w[key], `${path}.${key}`);
      if (diff !== "") return diff;
    }
  }
  return `${path}: got ${JSON.stringify(got)?.slice(0, 80)}, expected ${JSON.stringify(want)?.slice(0, 80)}`;
}

function judge(fixture: ParserFixture, outcome: Outcome | undefined): Verdict {
  if (outcome === undefined) return { result: "FAIL", reason: "no result.value[0] in the answer" };
  const expected = fixture.expected ?? {};
  if (expected.rejection !== undefined) {
    const { kind, message } = expected.rejection;
    if (outcome.status !== "failure")
      return { result: "FAIL", reason: `accepted; expected a ${kind ?? "?"} rejection` };
    const code = outcome.error?.code;
    if (kind === "parse")
      return code === "parse_error"
        ? { result: "PASS" }
        : { result: "FAIL", reason: `code ${code}, expected parse_error` };
    if (code !== "validation_error")
      return { result: "FAIL", reason: `code ${code}, expected validation_error` };
    return outcome.error?.message === message
      ? { result: "PASS" }
      : {
          result: "FAIL",
          reason: `message "${outcome.error?.message}", expected "${message}"`,
        };
  }
  if (outcome.status !== "success")
    return {
      result: "FAIL",
      reason: `${outcome.error?.code}: ${outcome.error?.message}`,
    };
  const diff = firstDifference(outcome.value, expected.validated);
  return diff === "" ? { result: "PASS" } : { result: "FAIL", reason: diff };
}

export async function replayParserEval(rows: CaseRow[]): Promise<Map<string, Verdict>> {
  const verdicts = new Map<string, Verdict>();
  const ws = makeWorkspace("runx-conformance-parser-");
  try {
    for (const row of rows) {
      const fixture = JSON.parse(readFileSync(join(UPSTREAM, row.target), "utf8")) as ParserFixture;
      const scope = fixture.scope ?? row.target.split("/")[2] ?? "";
      const kind = kindOf(fixture, scope);
      if (kind === undefined) {
        verdicts.set(row.id, { result: "SKIP", reason: `no request kind for scope ${scope}` });
        continue;
      }
      const request = { inputs: [{ ...fixture.input, kind }], returnErrors: true };
      ws.write("request.json", JSON.stringify(request));
      const r = await runx(ws, ["parser", "eval", "--input", "request.json", "--json"]);
      let outcome: Outcome | undefined;
      try {
        const answer = r.json<{ result?: { value?: Outcome[] } }>();
        outcome = answer.result?.value?.[0];
      } catch {
        verdicts.set(row.id, {
          result: "FAIL",
          reason: `exit ${r.code}: ${(r.stdout + r.stderr).trim().slice(0, 200)}`,
        });
        continue;
      }
      verdicts.set(row.id, judge(fixture, outcome));
    }
  } finally {
    ws.cleanup();
  }
  return verdicts;
}
