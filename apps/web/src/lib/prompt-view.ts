/**
 * An agent's instructions (Markdown from SKILL.md and the step) as blocks a page can show
 * readably: headings, paragraphs, lists, fenced code, and `code`, `*em*` and `**strong**` spans
 * inside text. Nothing
 * here produces HTML — the page renders the blocks as text, so instructions can never inject
 * markup. Pure.
 */

/** One block of the instructions. */
export type PromptBlock =
  | { kind: "heading"; level: number; text: string }
  | { kind: "paragraph"; text: string }
  | { kind: "list"; ordered: boolean; items: string[] }
  | { kind: "code"; text: string };

/** A run of text, of inline code, or of emphasised text (`*em*`, `**strong**`). */
export interface InlinePart {
  code: boolean;
  text: string;
  emphasis?: "em" | "strong";
}

const HEADING = /^(#{1,6})\s+(.*)$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const FENCE = /^\s*(```|~~~)/;

/** Splits Markdown instructions into blocks (anything unrecognised is a paragraph). */
export function promptBlocks(markdown: string): PromptBlock[] {
  const blocks: PromptBlock[] = [];
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n");
  let paragraph: string[] = [];
  let list: { ordered: boolean; items: string[] } | null = null;
  const flush = () => {
    if (paragraph.length > 0) blocks.push({ kind: "paragraph", text: paragraph.join(" ") });
    paragraph = [];
    if (list !== null) blocks.push({ kind: "list", ...list });
    list = null;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const fence = FENCE.exec(line);
    if (fence !== null) {
      flush();
      const body: string[] = [];
      for (i++; i < lines.length && !(lines[i] ?? "").trim().startsWith(fence[1]!); i++) {
        body.push(lines[i] ?? "");
      }
      blocks.push({ kind: "code", text: body.join("\n") });
      continue;
    }
    if (line.trim() === "") {
      flush();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading !== null) {
      flush();
      blocks.push({ kind: "heading", level: heading[1]!.length, text: heading[2]!.trim() });
      continue;
    }
    const bullet = BULLET.exec(line) ?? NUMBERED.exec(line);
    if (bullet !== null) {
      const ordered = NUMBERED.test(line) && !BULLET.test(line);
      if (paragraph.length > 0 || (list !== null && list.ordered !== ordered)) flush();
      list ??= { ordered, items: [] };
      list.items.push(bullet[1]!.trim());
      continue;
    }
    if (list !== null && /^\s+\S/.test(line)) {
      // A continuation line of the last item.
      const last = list.items.length - 1;
      list.items[last] = `${list.items[last]} ${line.trim()}`;
      continue;
    }
    if (list !== null) flush();
    paragraph.push(line.trim());
  }
  flush();
  return blocks;
}

/** Splits text at `code` spans, then the rest at `**strong**` and `*em*` spans. */
export function inlineParts(text: string): InlinePart[] {
  const parts: InlinePart[] = [];
  const re = /`([^`]+)`/g;
  let at = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m.index > at) parts.push(...emphasisParts(text.slice(at, m.index)));
    parts.push({ code: true, text: m[1]! });
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push(...emphasisParts(text.slice(at)));
  return parts;
}

// `**x**` or `*x*` whose content neither starts nor ends with a space (so `a * b * c` stays
// text); underscores are left alone, as snake_case names are common in instructions.
const EMPHASIS = /(\*\*)(\S(?:[^*]*?\S)?)\*\*|\*(\S(?:[^*]*?\S)?)\*/g;

function emphasisParts(text: string): InlinePart[] {
  const parts: InlinePart[] = [];
  let at = 0;
  for (let m = EMPHASIS.exec(text); m !== null; m = EMPHASIS.exec(text)) {
    if (m.index > at) parts.push({ code: false, text: text.slice(at, m.index) });
    parts.push(
      m[1] !== undefined
        ? { code: false, text: m[2]!, emphasis: "strong" }
        : { code: false, text: m[3]!, emphasis: "em" },
    );
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push({ code: false, text: text.slice(at) });
  return parts;
}
