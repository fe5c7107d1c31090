/**
 * Kernel fixtures (`kernel-eval`): `runx kernel eval --input <fixture> --json` from the root of
 * a scratch copy of the corpus. An `output` expectation must come back exactly as upstream's
 * CLI prints it, `{"status":"success","result":<expected>}` (the whole `{kind, value}`
 * object, deep equality, exit 0); an `error`
 * expectation as a failure envelope with that code (and message, when pinned), non-zero exit.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { buildTree, type CaseRow, type Verdict } from "../corpus.test-kit.js";
import { makeWorkspace, runx } from "../../testing/cli.js";

type Expected =
  { kind: "output"; value: unknown } | { kind: "error"; code: string; message?: string };

/** The first path at which `actual` differs from `expected`, with both values, or undefined. */
export function firstDifference(
  actual: unknown,
  expected: unknown,
  path = "$",
): string | undefined {
  if (isDeepStrictEqual(actual, expected)) return undefined;
  const bothArrays = Array.isArray(actual) && Array.isArray(expected);
  const bothObjects =
    typeof actual === "object" &&
    actual !== null &&
    typeof expected === "object" &&
    expected !== null &&
    !Array.isArray(actual) &&
    !Array.isArray(expected);
  if (bothArrays) {
    const a = actual as unknown[];
    const e = expected as unknown[];
    for (let i = 0; i < Math.max(a.length, e.length); i++) {
      const diff = firstDifference(a[i], e[i], `${path}[${i}]`);
      if (diff !== undefined) return diff;
    }
  } else if (bothObjects) {
    const a = actual as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    for (const key of [...new Set([...Object.keys(e), ...Object.keys(a)])].sort()) {
      const diff = firstDifference(a[key], e[key], `${path}.${key}`);
      if (diff !== undefined) return diff;
    }
  }
  const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v));
  return `${path}: got ${show(actual)}, expected ${show(expected)}`;
}

function judge(expected: Expected, code: number | null, stdout: string): Verdict {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    return { result: "FAIL", reason: `exit ${code}, stdout is not one JSON document` };
  }
  if (expected.kind === "output") {
    const diff = firstDifference(doc, { status: "success", result: expected });
    if (diff !== undefined) return { result: "FAIL", reason: diff };
    return code === 0 ? { result: "PASS" } : { result: "FAIL", reason: `exit ${code}` };
  }
  if (code === 0) return { result: "FAIL", reason: "exit 0 where an error was expected" };
  const error = (doc as { error?: { code?: unknown; message?: unknown } }).error ?? {};
  const want: Record<string, unknown> = { status: "failure", code: expected.code };
  const got: Record<string, unknown> = {
    status: (doc as { status?: unknown }).status,
    code: error.code,
  };
  if (expected.message !== undefined) {
    want.message = expected.message;
    got.message = error.message;
  }
  const diff = firstDifference(got, want);
  return diff === undefined ? { result: "PASS" } : { result: "FAIL", reason: diff };
}

export async function replayKernelEval(rows: CaseRow[]): Promise<Map<string, Verdict>> {
  const verdicts = new Map<string, Verdict>();
  const ws = makeWorkspace("runx-conformance-");
  try {
    const problem = buildTree(ws.root, rows);
    for (const row of rows) {
      if (problem !== undefined) {
        verdicts.set(row.id, { result: "SKIP", reason: problem });
        continue;
      }
      let expected: Expected;
      try {
        expected = (
          JSON.parse(readFileSync(join(ws.root, row.target), "utf8")) as {
            expected: Expected;
          }
        ).expected;
      } catch {
        verdicts.set(row.id, { result: "FAIL", reason: `cannot read ${row.target}` });
        continue;
      }
      const r = await runx(ws, ["kernel", "eval", "--input", row.target, "--json"], {
        timeoutMs: 30_000,
      });
      verdicts.set(row.id, judge(expected, r.code, r.stdout));
    }
  } finally {
    ws.cleanup();
  }
  return verdicts;
}
