/**
 * The public upstream conformance corpus (`../shared/conformance`), read at test time: the case
 * table, a scratch copy of the files a case needs (loud stubs at omitted upstream code paths,
 * our own stand-ins for the trivial scripts) and the verdict shape every group replayer returns.
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
import { dirname, join } from "node:path";
import { makeWorkspace, REPO_ROOT } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

export const CORPUS = join(REPO_ROOT, "..", "shared", "conformance");
export const UPSTREAM = join(CORPUS, "runx-upstream");
export const STAND_INS = join(REPO_ROOT, "fixtures", "conformance-scripts");

/** One row of `public-cases.tsv` (runnable `offline` or `needs-script`). */
export interface CaseRow {
  id: string;
  group: string;
  area: string;
  runnable: "offline" | "needs-script";
  replay: string;
  target: string;
  caseName: string;
  /** Corpus files the case needs (upstream paths). */
  files: string[];
  /** Upstream script paths we provide stand-ins for. */
  scripts: string[];
  /** The expectation column, verbatim. */
  expect: string;
  scriptNote: string;
  notes: string;
}

export type Verdict = { result: "PASS" } | { result: "FAIL" | "SKIP"; reason: string };

/** Replays a group's rows and returns one verdict per case id. */
export type Replayer = (rows: CaseRow[]) => Promise<Map<string, Verdict>>;

/** Every replayable public case, in table order. */
export function readRows(): CaseRow[] {
  const [header, ...lines] = readFileSync(join(CORPUS, "public-cases.tsv"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "");
  const columns = (header ?? "").split("\t");
  const at = (cells: string[], name: string): string => cells[columns.indexOf(name)] ?? "";
  const words = (text: string): string[] => (text === "-" || text === "" ? [] : text.split(" "));
  return lines.flatMap((line): CaseRow[] => {
    const cells = line.split("\t");
    const runnable = at(cells, "runnable");
    if (runnable !== "offline" && runnable !== "needs-script") return [];
    return [
      {
        id: at(cells, "case_id"),
        group: at(cells, "group"),
        area: at(cells, "area"),
        runnable,
        replay: at(cells, "replay"),
        target: at(cells, "target"),
        caseName: at(cells, "case_name"),
        files: words(at(cells, "files")),
        scripts: words(at(cells, "scripts")).map((s) => s.split("=")[0] ?? s),
        expect: at(cells, "expect"),
        scriptNote: at(cells, "script_note"),
        notes: at(cells, "notes"),
      },
    ];
  });
}

function makeWritable(path: string): void {
  const info = statSync(path);
  chmodSync(path, info.mode | (info.isDirectory() ? 0o700 : 0o600));
  if (info.isDirectory()) for (const name of readdirSync(path)) makeWritable(join(path, name));
}

let omittedCache: string[] | undefined;
function omitted(): string[] {
  omittedCache ??= JSON.parse(
    readFileSync(join(UPSTREAM, "omitted-code-files.json"), "utf8"),
  ) as string[];
  return omittedCache;
}

/**
 * Materialises the rows' files under `root` (upstream paths), a loud stub at each omitted code
 * path next to them, and our stand-ins for their scripts. Returns a reason when it cannot.
 */
export function buildTree(root: string, rows: CaseRow[]): string | undefined {
  for (const file of new Set(rows.flatMap((r) => r.files))) {
    const source = join(UPSTREAM, file);
    if (!existsSync(source)) {
      // Omitted upstream code gets the loud stub below.
      if (omitted().includes(file)) continue;
      return `missing corpus file ${file}`;
    }
    cpSync(source, join(root, file), { recursive: true });
  }
  makeWritable(root);
  for (const path of omitted()) {
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

/** A verdict for every row: used by groups that are not replayed yet. */
export function skipAll(rows: CaseRow[], reason: string): Map<string, Verdict> {
  return new Map(rows.map((row) => [row.id, { result: "SKIP", reason }]));
}

/**
 * Replays every row in its own scratch copy of the corpus: a row whose files cannot be laid
 * out is skipped with the reason, and an error thrown while replaying fails that row only.
 */
export async function replayEachInScratch(
  rows: CaseRow[],
  replay: (ws: Workspace, row: CaseRow) => Promise<Verdict>,
): Promise<Map<string, Verdict>> {
  const verdicts = new Map<string, Verdict>();
  for (const row of rows) {
    const ws = makeWorkspace("runx-conformance-");
    try {
      const problem = buildTree(ws.root, [row]);
      verdicts.set(
        row.id,
        problem !== undefined ? { result: "SKIP", reason: problem } : await replay(ws, row),
      );
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      verdicts.set(row.id, { result: "FAIL", reason });
    } finally {
      ws.cleanup();
    }
  }
  return verdicts;
}
