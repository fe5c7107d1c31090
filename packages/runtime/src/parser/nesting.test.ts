import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { MAX_NESTING_DEPTH, scanYamlNesting } from "./nesting.js";
import { parseStrictYaml } from "./strict-yaml.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const upstream = path.resolve(repoRoot, "../shared/conformance/runx-upstream");

/** The container depth of a plain value (the root container counts one). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== "object") return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

/** YAML texts of the corpus and the repository's own skills (SKILL.md frontmatter included). */
function yamlTexts(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(full);
      } else if (/\.ya?ml$/.test(entry.name)) {
        out.push([full, readFileSync(full, "utf8")]);
      } else if (entry.name === "SKILL.md") {
        const match = /^---\r?\n([\s\S]*?)\r?\n---\r?$/m.exec(readFileSync(full, "utf8"));
        if (match?.[1] !== undefined) out.push([full, match[1]]);
      }
    }
  };
  walk(upstream);
  walk(path.join(repoRoot, "skills"));
  return out;
}

const nested = (n: number): string => `args: ${"[".repeat(n)}${"]".repeat(n)}\n`;
function blockLevels(n: number): string {
  let text = "";
  for (let i = 0; i < n; i++) text += `${"  ".repeat(i)}k:\n`;
  return `${text}${"  ".repeat(n)}v\n`;
}

describe("scanYamlNesting", () => {
  it("never counts more levels than a real document has", () => {
    const texts = yamlTexts();
    expect(texts.length).toBeGreaterThan(50);
    let checked = 0;
    for (const [file, text] of texts) {
      const doc = parseDocument(text, { uniqueKeys: false });
      if (doc.errors.length > 0) continue;
      const depth = depthOf(doc.toJS());
      // With the bound at the document's own depth the scan must find nothing to refuse.
      expect(scanYamlNesting(text, depth), file).toBeUndefined();
      checked++;
    }
    expect(checked).toBeGreaterThan(50);
  });

  it("finds flow, block and compact nesting past the bound, with its position", () => {
    expect(scanYamlNesting(nested(3), 4)).toBeUndefined();
    expect(scanYamlNesting(nested(3), 3)).toEqual({ line: 1, column: 9 });
    expect(scanYamlNesting(blockLevels(5), 5)).toBeUndefined();
    expect(scanYamlNesting(blockLevels(5), 4)).toEqual({ line: 5, column: 9 });
    expect(scanYamlNesting("a:\n  - - - - x\n", 5)).toBeUndefined();
    expect(scanYamlNesting("a:\n  - - - - x\n", 4)).toEqual({ line: 2, column: 9 });
  });

  it("ignores brackets and indentation inside scalars", () => {
    const text = [
      "a: |",
      "  [[[[[[",
      "      deeply indented body",
      "b: 'x [[[[ ''y'' {{{'",
      'c: "multi [[[',
      '   line {{{"',
      "d: plain [[[ value",
      "   continued {{{",
      "e: [1, '[[', \"{{\"] # [[[[",
      "",
    ].join("\n");
    expect(scanYamlNesting(text, 2)).toBeUndefined();
    expect(scanYamlNesting(text, 1)).toEqual({ line: 9, column: 4 });
  });

  it("does not take a quote inside a plain flow scalar for a quoted scalar", () => {
    const text = `a: [it's, b, ${"[".repeat(10)}${"]".repeat(10)}]\n`;
    // The root mapping, the outer sequence and ten more: twelve levels.
    expect(scanYamlNesting(text, 12)).toBeUndefined();
    expect(scanYamlNesting(text, 11)).toEqual({ line: 1, column: 23 });
    expect(scanYamlNesting(`a: ['x]', "y[", ${"[".repeat(3)}]]]]\n`, 3)).toEqual({
      line: 1,
      column: 18,
    });
  });

  it("is linear: a megabyte of brackets or entries is refused at once", () => {
    for (const text of [nested(500_000), `${"- ".repeat(500_000)}x\n`]) {
      const started = performance.now();
      expect(scanYamlNesting(text, MAX_NESTING_DEPTH)).toBeDefined();
      expect(performance.now() - started).toBeLessThan(200);
    }
  });
});

describe("parseStrictYaml nesting bound", () => {
  it("accepts the bound and refuses one level more with NESTING_TOO_DEEP and a position", () => {
    expect(parseStrictYaml(nested(MAX_NESTING_DEPTH - 1)).value).toBeTypeOf("object");
    expect(() => parseStrictYaml(nested(MAX_NESTING_DEPTH), { file: "X.yaml" })).toThrow(
      expect.objectContaining({
        code: "NESTING_TOO_DEEP",
        details: expect.objectContaining({ file: "X.yaml", line: 1, column: 70 }),
      }),
    );
  });

  it("refuses nesting the text scan misses (sequences at their key's indentation) exactly", () => {
    // Each level is a mapping whose sequence sits at the key's indentation: two containers
    // per indentation step, which the text scan counts as one.
    let text = "k:\n";
    for (let i = 0; i < 40; i++) text += `${"  ".repeat(i)}- k:\n`;
    text += `${"  ".repeat(40)}- v\n`;
    const value = parseDocument(text).toJS() as unknown;
    expect(depthOf(value)).toBeGreaterThan(MAX_NESTING_DEPTH);
    expect(scanYamlNesting(text, MAX_NESTING_DEPTH)).toBeUndefined();
    expect(() => parseStrictYaml(text, { file: "g.yaml", lineOffset: 1 })).toThrow(
      expect.objectContaining({ code: "NESTING_TOO_DEEP" }),
    );
  });

  it("answers 20,000 brackets and 3,000 block levels with NESTING_TOO_DEEP", () => {
    for (const text of [nested(20_000), blockLevels(3_000)])
      expect(() => parseStrictYaml(text)).toThrow(
        expect.objectContaining({ code: "NESTING_TOO_DEEP" }),
      );
  });
});
