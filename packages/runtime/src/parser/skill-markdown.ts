/**
 * SKILL.md: a `---` line, strict-YAML frontmatter, a closing `---` line, then the
 * operator manual body. Frontmatter errors are FRONTMATTER_INVALID with file positions
 * (YAML-level refusals keep their YAML_* codes). Pure.
 */
import { RuntimeError } from "../errors.js";
import { validateSkillFrontmatter } from "../generated/validate-skill-frontmatter.js";
import { isJsonObject } from "./json.js";
import type { JsonObject } from "./json.js";
import { schemaError } from "./schema-errors.js";
import { parseStrictYaml } from "./strict-yaml.js";
import type { StrictYamlDocument } from "./strict-yaml.js";

/** A parsed SKILL.md. `frontmatter` keeps every key, including ones runx does not interpret. */
export interface SkillMarkdown {
  name: string;
  description?: string;
  category?: string;
  frontmatter: JsonObject;
  body: string;
  /** The `## Quality Profile` section of the body, when present. */
  qualityProfile?: string;
}

/** A parsed SKILL.md with its frontmatter document, for later position lookups. */
export interface ParsedSkillMarkdown {
  skill: SkillMarkdown;
  document: StrictYamlDocument;
}

/** Where the markdown came from (used in error details). */
export interface ParseSkillMarkdownOptions {
  file?: string;
}

const DELIMITER = /^---[ \t]*$/;

/** Splits text into lines, remembering where each line starts. */
function lineStarts(text: string): Array<{ start: number; content: string }> {
  const out: Array<{ start: number; content: string }> = [];
  let start = 0;
  while (start <= text.length) {
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    out.push({ start, content: text.slice(start, end).replace(/\r$/, "") });
    if (newline === -1) break;
    start = newline + 1;
  }
  return out;
}

function qualityProfileOf(body: string): string | undefined {
  const match = /^##[ \t]+quality profile[ \t]*#*[ \t]*$/im.exec(body);
  if (match === null) return undefined;
  const rest = body.slice(match.index + match[0].length);
  const next = /^#{1,2}[ \t]/m.exec(rest);
  const section = (next === null ? rest : rest.slice(0, next.index)).trim();
  return section === "" ? undefined : section;
}

/** The parse phase of SKILL.md: delimiters, strict YAML, a mapping. No schema checks yet. */
export interface SkillMarkdownParts {
  frontmatter: JsonObject;
  document: StrictYamlDocument;
  /** The frontmatter text between the delimiter lines, without its final line break. */
  rawFrontmatter: string;
  body: string;
}

/**
 * Splits SKILL.md text into frontmatter and body and parses the frontmatter (strict YAML, must
 * be a mapping). Throws FRONTMATTER_INVALID, YAML_SYNTAX or YAML_FORBIDDEN.
 */
export function splitSkillMarkdown(
  text: string,
  options: ParseSkillMarkdownOptions = {},
): SkillMarkdownParts {
  const file = options.file;
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = lineStarts(source);
  const invalid = (message: string, line: number, column = 1): RuntimeError =>
    new RuntimeError("FRONTMATTER_INVALID", message, { file, line, column, path: "" });

  if (!DELIMITER.test(lines[0]?.content ?? "")) {
    throw invalid("Skill markdown must start with YAML frontmatter delimited by ---", 1);
  }
  const closing = lines.findIndex((line, index) => index > 0 && DELIMITER.test(line.content));
  const close = lines[closing];
  const firstFrontmatterLine = lines[1];
  if (closing < 0 || close === undefined || firstFrontmatterLine === undefined) {
    throw invalid("frontmatter is not closed by a --- line", 1);
  }
  const yamlText = source.slice(firstFrontmatterLine.start, close.start);
  const next = lines[closing + 1];
  const body = next === undefined ? "" : source.slice(next.start);

  const document = parseStrictYaml(yamlText, { file, lineOffset: 1 });
  const frontmatter = document.value;
  if (!isJsonObject(frontmatter)) {
    const at = frontmatter === null ? { line: 2, column: 1 } : document.locate([]);
    throw invalid("frontmatter must be a mapping", at.line, at.column);
  }
  const rawFrontmatter = yamlText.replace(/\r?\n$/, "");
  return { frontmatter, document, rawFrontmatter, body };
}

/** Parses SKILL.md text, keeping the frontmatter document for position lookups. */
export function parseSkillMarkdownDocument(
  text: string,
  options: ParseSkillMarkdownOptions = {},
): ParsedSkillMarkdown {
  const file = options.file;
  const { frontmatter, document, body } = splitSkillMarkdown(text, options);
  const candidate: unknown = frontmatter;
  if (!validateSkillFrontmatter(candidate)) {
    throw schemaError(validateSkillFrontmatter.errors ?? [], frontmatter, document, {
      code: "FRONTMATTER_INVALID",
      file,
      subject: "frontmatter",
    });
  }

  const skill: SkillMarkdown = {
    name: typeof frontmatter.name === "string" ? frontmatter.name : "",
    frontmatter,
    body,
  };
  if (typeof frontmatter.description === "string") skill.description = frontmatter.description;
  const category = typeof frontmatter.category === "string" ? frontmatter.category.trim() : "";
  if (category !== "") skill.category = category;
  const qualityProfile = qualityProfileOf(body);
  if (qualityProfile !== undefined) skill.qualityProfile = qualityProfile;
  return { skill, document };
}

/** Parses SKILL.md text. Throws FRONTMATTER_INVALID, YAML_SYNTAX or YAML_FORBIDDEN. */
export function parseSkillMarkdown(
  text: string,
  options: ParseSkillMarkdownOptions = {},
): SkillMarkdown {
  return parseSkillMarkdownDocument(text, options).skill;
}
