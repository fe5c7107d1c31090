import {
  existsSync,
  mkdtempSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import {
  MAX_SOURCE_LINES,
  OVERSIZED_PENDING,
  checkRepository,
  findCycles,
  importGraph,
  layerViolations,
  oversizedFiles,
  parseLayerTable,
  sourceFiles,
  sourceRoots,
  testCodeImports,
} from "./architecture.mjs";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const srcRoot = join(repoRoot, "packages/runtime/src");
const rules = () => parseLayerTable(readFileSync(join(repoRoot, "docs/ARCHITECTURE.md"), "utf8"));

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "runx-arch-"));
  scratch.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("the structure checks of docs/ARCHITECTURE.md", () => {
  it("finds no cycle and no import outside its layer in this repository", () => {
    expect(checkRepository(repoRoot)).toEqual([]);
  });

  it("reports a cycle introduced into the real runtime, and the upward import that makes it", () => {
    const files = sourceFiles([srcRoot]);
    const victim = join(srcRoot, "parser/json.ts");
    const read = (file: string): string => {
      const text = readFileSync(file, "utf8");
      return file === victim
        ? `${text}\nimport type { RunScope } from "../run/context.js";\n`
        : text;
    };
    const graph = importGraph(files, read);
    const cycles = findCycles(graph);
    expect(cycles.some((cycle) => cycle.includes(victim))).toBe(true);
    expect(layerViolations(graph, srcRoot, rules())).toContain(
      "parser/json.ts imports run/context.ts: parser may not import run",
    );
  });

  it("counts type-only, re-export and multi-line imports, not dynamic ones", () => {
    const root = tree({
      "a.ts": 'import type {\n  B,\n} from "./b.js";\nexport const a = 1;\n',
      "b.ts": 'export { a } from "./a.js";\nexport type B = number;\n',
      "c.ts": 'export async function load() {\n  return import("./d.js");\n}\n',
      "d.ts": 'import { load } from "./c.js";\nexport const d = load;\n',
    });
    const cycles = findCycles(importGraph(sourceFiles([root])));
    expect(cycles).toEqual([[join(root, "a.ts"), join(root, "b.ts")]]);
  });

  it("refuses an import from a lower row into a higher one and names a room the table lacks", () => {
    const root = tree({
      "src/parser/a.ts": 'import { x } from "../run/x.js";\nexport const a = x;\n',
      "src/run/x.ts": 'import { b } from "../parser/b.js";\nexport const x = b;\n',
      "src/parser/b.ts": "export const b = 1;\n",
      "src/extra/y.ts": 'import { b } from "../parser/b.js";\nexport const y = b;\n',
      "src/parser/a.test.ts": 'import { x } from "../run/x.js";\nexport const t = x;\n',
    });
    const table = parseLayerTable(
      "## Layer rules\n\n| Units | Owns |\n| --- | --- |\n| `parser/` | parsing |\n| `run/` | runs |\n",
    );
    expect(layerViolations(importGraph(sourceFiles([root])), join(root, "src"), table)).toEqual([
      "extra is not in the layer table of docs/ARCHITECTURE.md",
      "parser/a.ts imports run/x.ts: parser may not import run",
    ]);
  });

  it("reports production code importing the test kit, injected into the real runtime", () => {
    const roots = sourceRoots(repoRoot);
    const files = sourceFiles(roots);
    const victim = join(srcRoot, "run/pause.ts");
    const read = (file: string): string => {
      const text = readFileSync(file, "utf8");
      return file === victim
        ? `${text}\nimport { makeToolContext } from "../testing/tool-context.js";\n`
        : text;
    };
    expect(testCodeImports(importGraph(files), roots)).toEqual([]);
    expect(testCodeImports(importGraph(files, read), roots)).toEqual([
      "run/pause.ts imports testing/tool-context.ts: production code may not import test code",
    ]);
  });

  it("lets tests and test kits reach the test kit, and refuses a test kit imported by production", () => {
    const root = tree({
      "src/run/a.ts": 'import { k } from "../data/contract.test-kit.js";\nexport const a = k;\n',
      "src/data/contract.test-kit.ts":
        'import { t } from "../testing/t.js";\nexport const k = t;\n',
      "src/testing/t.ts": "export const t = 1;\n",
      "src/run/a.test.ts": 'import { t } from "../testing/t.js";\nexport const u = t;\n',
    });
    const src = join(root, "src");
    expect(testCodeImports(importGraph(sourceFiles([src])), [src])).toEqual([
      "run/a.ts imports data/contract.test-kit.ts: production code may not import test code",
    ]);
  });

  it("fails a production file over the line limit unless it is pending a split, on the real tree", () => {
    const roots = sourceRoots(repoRoot);
    const files = sourceFiles(roots);
    expect(oversizedFiles(files, repoRoot)).toEqual([]);
    // The real checker over the real tree, with one real file grown past the limit.
    const victim = join(srcRoot, "parser/json.ts");
    const padding = "\n".repeat(MAX_SOURCE_LINES + 1);
    const read = (file: string): string =>
      readFileSync(file, "utf8") + (file === victim ? padding : "");
    const problems = oversizedFiles(files, repoRoot, { read });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^packages\/runtime\/src\/parser\/json\.ts has \d+ lines, over the 500-line limit/,
    );
  });

  it("keeps the pending list shrinking: each entry is named once, with its reason, and still over", () => {
    expect([...OVERSIZED_PENDING.keys()].sort()).toEqual([
      "packages/runtime/src/console/approvals.ts",
      "packages/runtime/src/receipts/store.ts",
      "packages/runtime/src/run/adapter-step.ts",
      "packages/runtime/src/run/graph-steps.ts",
    ]);
    for (const reason of OVERSIZED_PENDING.values()) expect(reason).toMatch(/^split pending/);
    const root = tree({
      "src/long.ts": "x\n".repeat(4),
      "src/listed-long.ts": "x\n".repeat(4),
      "src/short.ts": "x\n".repeat(3),
      "src/long.test.ts": "x\n".repeat(9),
      "src/long.test-kit.ts": "x\n".repeat(9),
      "src/generated/validate.mjs": "x\n".repeat(9),
    });
    const pending = new Map([
      ["src/listed-long.ts", "split pending"],
      ["src/short.ts", "split pending"],
      ["src/gone.ts", "split pending"],
    ]);
    expect(oversizedFiles(sourceFiles([root]), root, { limit: 3, pending })).toEqual([
      "src/gone.ts is not over 3 lines: take it out of OVERSIZED_PENDING",
      "src/long.ts has 4 lines, over the 3-line limit: split it by concern",
      "src/short.ts is not over 3 lines: take it out of OVERSIZED_PENDING",
    ]);
  });

  it("names every folder and top-level file of the runtime in the layer table", () => {
    const table = rules();
    const units = new Set(
      sourceFiles([srcRoot])
        .map((file) => file.slice(srcRoot.length + 1).split("/")[0]!)
        .filter((unit) => !/\.test\.ts$/.test(unit)),
    );
    expect([...units].filter((unit) => !table.has(unit))).toEqual([]);
  });

  it("finds no comment citing an issue number or a section of a document outside the repository", () => {
    // Built from parts so that this file does not match itself.
    const citation = new RegExp(["\u00a7[0-9]", "[Ii]ssue [0-9]"].join("|"));
    const roots = [
      "packages/runtime/src",
      "packages/runtime/schemas",
      "apps/api/src",
      "apps/web/src",
    ];
    const hits: string[] = [];
    const files: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (!["node_modules", "dist", ".next", "generated"].includes(entry.name)) walk(path);
        } else if (/\.(ts|tsx|mts|mjs|json|md)$/.test(entry.name)) files.push(path);
      }
    };
    for (const root of roots) walk(join(repoRoot, root));
    for (const file of files) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, index) => {
          if (citation.test(line)) hits.push(`${file.slice(repoRoot.length + 1)}:${index + 1}`);
        });
    }
    expect(hits).toEqual([]);
  });

  it("resolves every relative link of README.md and docs/ to a file of the repository", () => {
    const documents = [join(repoRoot, "README.md")];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith(".md")) documents.push(path);
      }
    };
    walk(join(repoRoot, "docs"));
    const broken: string[] = [];
    for (const document of documents) {
      for (const match of readFileSync(document, "utf8").matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        if (!existsSync(resolve(dirname(document), target))) {
          broken.push(`${document.slice(repoRoot.length + 1)} → ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
