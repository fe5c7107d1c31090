/**
 * Replays the public upstream harness cases (replay kinds `harness-pkg` and `harness-file`,
 * runnable `offline` or `needs-script`) through the built CLI, as the corpus README describes,
 * and holds the result against `conformance-gaps.json`: a listed case that now passes, or an
 * unlisted case that fails, fails this test, so the gap list can only shrink.
 */
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeWorkspace, REPO_ROOT, runx } from "../testing/cli.js";

const CORPUS = join(REPO_ROOT, "..", "shared", "conformance");
const UPSTREAM = join(CORPUS, "runx-upstream");
const STAND_INS = join(REPO_ROOT, "fixtures", "conformance-scripts");
const GAPS_FILE = join(dirname(new URL(import.meta.url).pathname), "conformance-gaps.json");

interface CaseRow {
  id: string;
  replay: "harness-pkg" | "harness-file";
  target: string;
  caseName: string;
  files: string[];
  scripts: string[];
}

interface Report {
  case_names?: string[];
  assertion_errors?: string[];
  status?: string;
}

type Verdict = { result: "PASS" } | { result: "FAIL" | "SKIP"; reason: string };

function readRows(): CaseRow[] {
  const [header, ...lines] = readFileSync(join(CORPUS, "public-cases.tsv"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
  const columns = (header ?? "").split("\t");
  const at = (cells: string[], name: string): string => cells[columns.indexOf(name)] ?? "";
  const words = (text: string): string[] => (text === "-" || text === "" ? [] : text.split(" "));
  return lines.flatMap((line) => {
    const cells = line.split("\t");
    const replay = at(cells, "replay");
    const runnable = at(cells, "runnable");
    if (replay !== "harness-pkg" && replay !== "harness-file") return [];
    if (runnable !== "offline" && runnable !== "needs-script") return [];
    return [
      {
        id: at(cells, "case_id"),
        replay,
        target: at(cells, "target"),
        caseName: at(cells, "case_name"),
        files: words(at(cells, "files")),
        scripts: words(at(cells, "scripts")).map((s) => s.split("=")[0] ?? s),
      },
    ];
  });
}

function makeWritable(path: string): void {
  const info = statSync(path);
  chmodSync(path, info.mode | (info.isDirectory() ? 0o700 : 0o600));
  if (info.isDirectory()) for (const name of readdirSync(path)) makeWritable(join(path, name));
}

const omitted = JSON.parse(
  readFileSync(join(UPSTREAM, "omitted-code-files.json"), "utf8"),
) as string[];

/** Materialises the rows' files, a loud stub at each omitted code path, and our stand-ins. */
function buildTree(root: string, rows: CaseRow[]): string | undefined {
  for (const file of new Set(rows.flatMap((r) => r.files))) {
    const source = join(UPSTREAM, file);
    if (!existsSync(source)) {
      // Omitted upstream code gets the loud stub below.
      if (omitted.includes(file)) continue;
      return `missing corpus file ${file}`;
    }
    cpSync(source, join(root, file), { recursive: true });
  }
  makeWritable(root);
  for (const path of omitted) {
    const dir = join(root, dirname(path));
    const listed = rows.some((r) => r.files.includes(path));
    if ((!existsSync(dir) && !listed) || existsSync(join(root, path))) continue;
    mkdirSync(dir, { recursive: true });
    const stub = path.endsWith(".sh")
      ? "#!/bin/sh\necho 'omitted upstream code' >&2\nexit 97\n"
      : "throw new Error('omitted upstream code');\n";
    writeFileSync(join(root, path), stub, { mode: 0o755 });
  }
  for (const script of new Set(rows.flatMap((r) => r.scripts))) {
    const standIn = join(STAND_INS, script.replace(/^fixtures\//, ""));
    if (!existsSync(standIn)) {
      if (existsSync(join(root, script))) continue;
      return `no stand-in for ${script}`;
    }
    mkdirSync(dirname(join(root, script)), { recursive: true });
    cpSync(standIn, join(root, script));
    chmodSync(join(root, script), 0o755);
  }
  return undefined;
}

function judge(row: CaseRow, code: number | null, report: Report | undefined): Verdict {
  if (report === undefined) return { result: "FAIL", reason: `no JSON report (exit ${code})` };
  if (row.replay === "harness-file") {
    if (code === 0 && report.status === "passed") return { result: "PASS" };
    return {
      result: "FAIL",
      reason: report.assertion_errors?.[0] ?? `exit ${code}, status ${report.status}`,
    };
  }
  const label = row.id.includes("#") ? row.caseName : row.id;
  if (!(report.case_names ?? []).includes(row.caseName)) {
    const own = (report.assertion_errors ?? []).find((e) => e.startsWith(`${label}: `));
    return { result: "FAIL", reason: own ?? "case not reported" };
  }
  const errors = (report.assertion_errors ?? []).filter((e) => e.startsWith(`${label}: `));
  return errors.length === 0 ? { result: "PASS" } : { result: "FAIL", reason: errors[0] ?? "" };
}

describe("upstream harness conformance", () => {
  it("replays the offline harness cases; failures match conformance-gaps.json", async () => {
    const rows = readRows();
    const groups = new Map<string, CaseRow[]>();
    for (const row of rows) {
      const key = `${row.replay}\t${row.target}`;
      groups.set(key, [...(groups.get(key) ?? []), row]);
    }
    const verdicts = new Map<string, Verdict>();
    for (const group of groups.values()) {
      const first = group[0] as CaseRow;
      const ws = makeWorkspace("runx-conformance-");
      try {
        const problem = buildTree(ws.root, group);
        if (problem !== undefined) {
          for (const row of group) verdicts.set(row.id, { result: "SKIP", reason: problem });
          continue;
        }
        const r = await runx(
          ws,
          ["harness", first.target, "--json", "--receipt-dir", "conformance-receipts"],
          { timeoutMs: 60_000 },
        );
        let report: Report | undefined;
        try {
          report = r.json<Report>();
        } catch {
          report = undefined;
        }
        for (const row of group) verdicts.set(row.id, judge(row, r.code, report));
      } finally {
        ws.cleanup();
      }
    }

    const gaps = JSON.parse(readFileSync(GAPS_FILE, "utf8")) as Record<string, string>;
    const observed: Record<string, string> = {};
    const problems: string[] = [];
    for (const row of rows) {
      const verdict = verdicts.get(row.id) ?? { result: "SKIP", reason: "not run" };
      const reason = verdict.result === "PASS" ? "" : ` — ${verdict.reason.split("\n")[0]}`;
      console.log(`${verdict.result} ${row.id}${reason}`);
      if (verdict.result === "PASS") {
        if (row.id in gaps) problems.push(`${row.id} passes now: remove it from the gaps`);
      } else {
        observed[row.id] = `${verdict.result}: ${verdict.reason.split("\n")[0]}`.slice(0, 240);
        if (!(row.id in gaps)) problems.push(`${row.id} regressed: ${verdict.reason}`);
      }
    }
    for (const id of Object.keys(gaps)) {
      if (!rows.some((r) => r.id === id)) problems.push(`${id} is listed but is not a public case`);
    }
    const passing = rows.filter((r) => verdicts.get(r.id)?.result === "PASS").length;
    // Not in the "N passed, N failed" form on purpose: that line belongs to the test runner.
    console.log(
      `conformance summary — ${passing} of ${rows.length} replayed upstream harness cases pass (${Math.round((100 * passing) / Math.max(1, rows.length))}%); ${Object.keys(gaps).length} are listed with reasons in conformance-gaps.json`,
    );
    // The observed gaps, for refreshing the committed file on purpose.
    writeFileSync(
      join(tmpdir(), "runx-conformance-observed.json"),
      `${JSON.stringify(observed, null, 2)}\n`,
    );
    expect(problems).toEqual([]);
  }, 600_000);
});
