#!/usr/bin/env node
/**
 * The structure checks of docs/ARCHITECTURE.md: no import cycles anywhere in the runtime and
 * the apps; every production module of `packages/runtime/src` imports only the rooms its row of
 * the layer table allows; no production module imports test code (`testing/`, test kits, test
 * support); and no production source file is longer than MAX_SOURCE_LINES, except the files
 * OVERSIZED_PENDING names while their split is pending. The table in the document is the rule:
 * this script reads it, so the document cannot drift from what is enforced.
 *
 * Imports counted: every static `import … from`, `export … from` and side-effect `import "…"`,
 * type-only ones included (a type cycle still ties two files together for a reader). Dynamic
 * `import()` is not counted: it is how the runtime defers loading a room it does not always
 * need, and it cannot create an evaluation-order cycle.
 *
 * Usage: `node scripts/architecture.mjs` (exit 1 and one line per problem when it fails).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const SOURCE = /\.(ts|tsx|mts|mjs)$/;
const SKIP_DIRS = new Set(["node_modules", "dist", ".next", "generated"]);
const STATIC_IMPORT =
  /(?:^|[\n;])\s*(?:import|export)\s+(?:[^'";]*?\s+from\s+|)["']([^"']+)["']|(?:^|[\n;])\s*import\s*["']([^"']+)["']/g;

/** Every source file below `roots` (absolute paths), skipping build output. */
export function sourceFiles(roots) {
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(join(dir, entry.name));
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) {
        out.push(resolve(dir, entry.name));
      }
    }
  };
  for (const root of roots) walk(resolve(root));
  return out.sort();
}

/** The relative import specifiers of one file's text (comments are not stripped: keep imports at top level). */
export function importSpecifiers(text) {
  const specs = [];
  for (const match of text.matchAll(STATIC_IMPORT)) {
    const spec = match[1] ?? match[2];
    if (spec !== undefined && spec.startsWith(".")) specs.push(spec);
  }
  return specs;
}

/** file → files it imports, resolved the way TypeScript's NodeNext resolution finds `.js` specifiers. */
export function importGraph(files, read = (file) => readFileSync(file, "utf8")) {
  const known = new Set(files);
  const graph = new Map();
  for (const file of files) {
    const targets = [];
    for (const spec of importSpecifiers(read(file))) {
      const base = resolve(dirname(file), spec);
      const candidates = [
        base,
        base.replace(/\.js$/, ".ts"),
        base.replace(/\.js$/, ".tsx"),
        base.replace(/\.mjs$/, ".mts"),
        `${base}.ts`,
        `${base}.tsx`,
        join(base, "index.ts"),
      ];
      const hit = candidates.find((candidate) => known.has(candidate));
      if (hit !== undefined) targets.push(hit);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** Strongly connected components with more than one file, or a file importing itself. */
export function findCycles(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (start) => {
    // Iterative Tarjan: the runtime has hundreds of files and deep chains.
    const frames = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter);
    counter += 1;
    stack.push(start);
    onStack.add(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      const targets = graph.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next];
        frame.next += 1;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter);
          counter += 1;
          stack.push(target);
          onStack.add(target);
          frames.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node), index.get(target)));
        }
        continue;
      }
      frames.pop();
      if (frames.length > 0) {
        const parent = frames[frames.length - 1].node;
        low.set(parent, Math.min(low.get(parent), low.get(frame.node)));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = (graph.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfLoop) cycles.push(component.sort());
      }
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

/**
 * The layer table of docs/ARCHITECTURE.md: the rows of the table under the "Layer rules"
 * heading, lowest layer first. Column 1 names the row's units in backticks (a folder
 * `parser/` or a file `errors.ts` of `packages/runtime/src`). A unit may import the units of
 * its own row and of every row above it, never one below.
 */
export function parseLayerTable(markdown) {
  const start = markdown.indexOf("## Layer rules");
  if (start < 0) throw new Error("docs/ARCHITECTURE.md has no '## Layer rules' section");
  const rules = new Map();
  const seen = [];
  for (const line of markdown.slice(start).split("\n").slice(1)) {
    if (line.startsWith("## ")) break;
    if (!line.startsWith("|") || /^\|\s*-/.test(line)) continue;
    const first = line.split("|")[1] ?? "";
    const units = [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1].replace(/\/$/, ""));
    if (units.length === 0) continue; // the header row
    seen.push(...units);
    for (const unit of units) {
      if (rules.has(unit)) throw new Error(`the layer table names ${unit} twice`);
      rules.set(unit, new Set(seen));
    }
  }
  return rules;
}

/** Test code and test helpers: outside the layer rules (they may reach any room they test). */
export function isTestFile(rel) {
  return (
    /\.test\.tsx?$/.test(rel) ||
    /(^|[-/])test-(support|kit|context|receipts|server)/.test(rel) ||
    /\.test-kit\.ts$/.test(rel) ||
    rel.startsWith(`testing${sep}`) ||
    rel.startsWith("testing/")
  );
}

/** Production modules (of the runtime or an app, paths relative to its `src`) importing test code. */
export function testCodeImports(graph, srcRoots) {
  const within = (file) => {
    for (const root of srcRoots) {
      const rel = relative(root, file);
      if (!rel.startsWith("..")) return rel;
    }
    return undefined;
  };
  const problems = [];
  for (const [file, targets] of graph) {
    const rel = within(file);
    if (rel === undefined || isTestFile(rel)) continue;
    for (const target of targets) {
      const targetRel = within(target);
      if (targetRel !== undefined && isTestFile(targetRel)) {
        problems.push(`${rel} imports ${targetRel}: production code may not import test code`);
      }
    }
  }
  return problems.sort();
}

/** The longest a production source file may be, in lines. */
export const MAX_SOURCE_LINES = 500;

/**
 * Production files over MAX_SOURCE_LINES while their split is pending (repository-relative
 * path → why). The list only shrinks: an entry whose file is back within the limit, or gone,
 * is itself reported, so a finished split must take its entry out.
 */
export const OVERSIZED_PENDING = new Map([
  [
    "packages/runtime/src/run/graph-steps.ts",
    "split pending: under other work now, split once it lands",
  ],
  [
    "packages/runtime/src/run/adapter-step.ts",
    "split pending: under other work now, split once it lands",
  ],
  [
    "packages/runtime/src/receipts/store.ts",
    "split pending: under other work now, split once it lands",
  ],
  [
    "packages/runtime/src/console/approvals.ts",
    "split pending: under other work now, split once it lands",
  ],
]);

/** Test code, test kits and generated sources: outside the length rule. */
export function isLengthExempt(rel) {
  return (
    /\.test\.tsx?$/.test(rel) ||
    /\.test-kit\.tsx?$/.test(rel) ||
    rel.split(/[\\/]/).includes("generated")
  );
}

/** Lines of a text, as `wc -l` counts them (a final line without a newline still counts). */
function lineCount(text) {
  if (text === "") return 0;
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/**
 * Production files (paths relative to `repoRoot`) longer than `limit` lines that `pending`
 * does not name, and entries of `pending` that are not (or no longer) over the limit.
 */
export function oversizedFiles(files, repoRoot, options = {}) {
  const read = options.read ?? ((file) => readFileSync(file, "utf8"));
  const limit = options.limit ?? MAX_SOURCE_LINES;
  const pending = options.pending ?? OVERSIZED_PENDING;
  const problems = [];
  const over = new Set();
  for (const file of files) {
    const rel = relative(repoRoot, file).split(sep).join("/");
    if (isLengthExempt(rel)) continue;
    const lines = lineCount(read(file));
    if (lines <= limit) continue;
    over.add(rel);
    if (!pending.has(rel)) {
      problems.push(`${rel} has ${lines} lines, over the ${limit}-line limit: split it by concern`);
    }
  }
  for (const rel of pending.keys()) {
    if (!over.has(rel)) {
      problems.push(`${rel} is not over ${limit} lines: take it out of OVERSIZED_PENDING`);
    }
  }
  return problems.sort();
}

/** The unit of a file of the runtime source: its top folder, or the file itself at the top. */
export function unitOf(rel) {
  return rel.split(/[\\/]/)[0];
}

/** Imports between units of `srcRoot` that the layer table does not allow, and units it lacks. */
export function layerViolations(graph, srcRoot, rules) {
  const problems = [];
  const missing = new Set();
  for (const [file, targets] of graph) {
    const rel = relative(srcRoot, file);
    if (rel.startsWith("..") || isTestFile(rel)) continue;
    const from = unitOf(rel);
    const allowed = rules.get(from);
    if (allowed === undefined) {
      missing.add(from);
      continue;
    }
    for (const target of targets) {
      const targetRel = relative(srcRoot, target);
      if (targetRel.startsWith("..")) continue;
      const to = unitOf(targetRel);
      if (to === from || allowed.has(to)) continue;
      problems.push(`${rel} imports ${targetRel}: ${from} may not import ${to}`);
    }
  }
  for (const unit of missing) {
    problems.push(`${unit} is not in the layer table of docs/ARCHITECTURE.md`);
  }
  return problems.sort();
}

/** The source roots the checks cover: the runtime's `src` and every app's `src`. */
export function sourceRoots(repoRoot) {
  const apps = join(repoRoot, "apps");
  const appRoots = readdirSync(apps, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(apps, entry.name, "src"))
    .filter((root) => existsSync(root));
  return [join(repoRoot, "packages/runtime/src"), ...appRoots.sort()];
}

/** Every problem of the repository at `repoRoot`: cycles, layer violations, test code imported, files too long. */
export function checkRepository(repoRoot) {
  const roots = sourceRoots(repoRoot);
  const srcRoot = roots[0];
  const files = sourceFiles(roots);
  const graph = importGraph(files);
  const problems = findCycles(graph).map(
    (cycle) => `import cycle: ${cycle.map((file) => relative(repoRoot, file)).join(" → ")}`,
  );
  const rules = parseLayerTable(readFileSync(join(repoRoot, "docs/ARCHITECTURE.md"), "utf8"));
  problems.push(...layerViolations(graph, srcRoot, rules));
  problems.push(...testCodeImports(graph, roots));
  problems.push(...oversizedFiles(files, repoRoot));
  return problems;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const problems = checkRepository(repoRoot);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) process.exit(1);
  console.log(
    `architecture: no import cycles, every import within its layer, no test code in production, no file over ${MAX_SOURCE_LINES} lines beyond ${OVERSIZED_PENDING.size} pending splits`,
  );
}
