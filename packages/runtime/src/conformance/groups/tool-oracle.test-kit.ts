/**
 * Tool catalog oracles (`tool-oracle`). Each case runs one `runx tool …
 * --json` in a scratch copy of the corpus and compares:
 *
 * - stdout, parsed as JSON, deep-equal to `oracles/<case>.json` after path normalisation: every
 *   occurrence of the scratch tree's root (as given, and its real path) in a string becomes
 *   `<repo>`, since the scratch tree keeps upstream paths below its root exactly as upstream's
 *   checkout does below `<repo>`;
 * - the exit status with the `exit N` of the `expect` column;
 * - stderr empty when the exit status is 0 (upstream's own CLI tests assert that).
 *
 * Invocations: `search <query> --source <s>` with RUNX_ENABLE_FIXTURE_TOOL_CATALOG=1 and
 * `inspect <ref> [--source <s>]` with RUNX_TOOL_ROOTS=<inspect/toolRoot> (the case entry of
 * `search|inspect/cases.json` named by the row), and `build tools/<ns>/<tool>` with RUNX_CWD at
 * `build/<case>/workspace`. The `.status/.stderr/.stdout` oracle sidecars the table lists are not
 * in the public corpus; the `.json` oracle and the `expect` column carry the same facts.
 */
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { makeWorkspace, runx } from "../../testing/cli.js";
import { buildTree, UPSTREAM, type CaseRow, type Verdict } from "../corpus.test-kit.js";

interface CatalogCase {
  name: string;
  query?: string;
  ref?: string;
  source?: string;
  toolRoot?: string;
}

const ORACLES = "fixtures/tool-catalogs/oracles";

/** First place where `actual` differs from `expected`, or undefined when deep-equal. */
export function firstDifference(
  expected: unknown,
  actual: unknown,
  path = "$",
): string | undefined {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
    if (actual.length !== expected.length) {
      return `${path}: expected ${expected.length} items, got ${actual.length}`;
    }
    for (let i = 0; i < expected.length; i++) {
      const d = firstDifference(expected[i], actual[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) {
      return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    }
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!(key in a)) return `${path}.${key}: missing`;
      const d = firstDifference(e[key], a[key], `${path}.${key}`);
      if (d !== undefined) return d;
    }
    const extra = Object.keys(a).find((k) => !(k in e));
    return extra === undefined ? undefined : `${path}.${extra}: unexpected field`;
  }
  return Object.is(expected, actual)
    ? undefined
    : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/** Replaces the scratch root in every string of `value` with `<repo>`. */
function normalise(value: unknown, roots: readonly string[]): unknown {
  if (typeof value === "string") {
    return roots.reduce((s, root) => s.split(root).join("<repo>"), value);
  }
  if (Array.isArray(value)) return value.map((v) => normalise(v, roots));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalise(v, roots)]));
  }
  return value;
}

function catalogCase(row: CaseRow): CatalogCase | undefined {
  const cases = JSON.parse(readFileSync(join(UPSTREAM, row.target), "utf8")) as CatalogCase[];
  return cases.find((c) => c.name === row.caseName);
}

/** The `runx` arguments and environment of a row, relative to scratch `root`. */
function invocation(
  row: CaseRow,
  root: string,
): { args: string[]; env: Record<string, string> } | string {
  if (row.target.startsWith("fixtures/tool-catalogs/build/")) {
    const workspace = join(root, row.target, "workspace");
    const namespaces = readdirSync(join(workspace, "tools"));
    const tools = namespaces.flatMap((ns) =>
      readdirSync(join(workspace, "tools", ns)).map((t) => `tools/${ns}/${t}`),
    );
    if (tools.length !== 1) return `expected one tool under ${row.target}/workspace/tools`;
    return { args: ["tool", "build", tools[0] as string, "--json"], env: { RUNX_CWD: workspace } };
  }
  const entry = catalogCase(row);
  if (entry === undefined) return `case ${row.caseName} not in ${row.target}`;
  const source = entry.source !== undefined ? ["--source", entry.source] : [];
  const env: Record<string, string> = {};
  if (entry.source === "fixture-mcp") env.RUNX_ENABLE_FIXTURE_TOOL_CATALOG = "1";
  if (row.target.endsWith("search/cases.json")) {
    return { args: ["tool", "search", entry.query ?? "", ...source, "--json"], env };
  }
  if (entry.toolRoot !== undefined) {
    env.RUNX_TOOL_ROOTS = join(root, "fixtures/tool-catalogs/inspect", entry.toolRoot);
  }
  return { args: ["tool", "inspect", entry.ref ?? "", ...source, "--json"], env };
}

async function replayOne(row: CaseRow): Promise<Verdict> {
  const expectedCode = /exit (\d+)/.exec(row.expect)?.[1];
  if (expectedCode === undefined) return { result: "SKIP", reason: "no exit status in expect" };
  const ws = makeWorkspace("runx-tool-oracle-");
  try {
    // Oracle sidecars (.status/.stderr/.stdout) are listed but not part of the public corpus.
    const files = row.files.filter((f) => !f.startsWith(ORACLES) || existsSync(join(UPSTREAM, f)));
    const problem = buildTree(ws.root, [{ ...row, files }]);
    if (problem !== undefined) return { result: "SKIP", reason: problem };
    const call = invocation(row, ws.root);
    if (typeof call === "string") return { result: "SKIP", reason: call };
    const r = await runx(ws, call.args, { env: call.env });
    let stdout: unknown;
    try {
      stdout = JSON.parse(r.stdout);
    } catch {
      return {
        result: "FAIL",
        reason: `stdout is not JSON (exit ${r.code}): ${r.stdout || r.stderr}`,
      };
    }
    const oracle: unknown = JSON.parse(
      readFileSync(join(UPSTREAM, ORACLES, `${row.caseName}.json`), "utf8"),
    );
    const difference = firstDifference(oracle, normalise(stdout, [ws.root, realpathSync(ws.root)]));
    if (difference !== undefined) return { result: "FAIL", reason: difference };
    if (String(r.code) !== expectedCode) {
      return { result: "FAIL", reason: `exit ${r.code}, expected ${expectedCode}` };
    }
    if (r.code === 0 && r.stderr !== "") return { result: "FAIL", reason: `stderr: ${r.stderr}` };
    return { result: "PASS" };
  } finally {
    ws.cleanup();
  }
}

export async function replayToolOracle(rows: CaseRow[]): Promise<Map<string, Verdict>> {
  const verdicts = new Map<string, Verdict>();
  for (const row of rows) verdicts.set(row.id, await replayOne(row));
  return verdicts;
}
