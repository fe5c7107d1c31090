/**
 * Pure, dependency-free extraction from fetched HTML for `web.fetch`: readable text, page
 * metadata and links. A tolerant scanner, not a browser: it never executes anything and
 * ignores script, style and template content.
 */

/** Page metadata (each field null when absent). */
export interface PageMetadata {
  title: string | null;
  description: string | null;
  canonical: string | null;
  lang: string | null;
}

/** One outgoing link, resolved against the page URL. */
export interface PageLink {
  url: string;
  text: string;
}

/** Links returned at most. */
export const MAX_LINKS = 1000;

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  copy: "©",
  reg: "®",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
};

/** Decodes character references (named subset, decimal, hexadecimal). */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const code =
        ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : Number(ref.slice(1));
      return Number.isInteger(code) &&
        code > 0 &&
        code <= 0x10ffff &&
        (code < 0xd800 || code > 0xdfff)
        ? String.fromCodePoint(code)
        : whole;
    }
    return NAMED_ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** Removes comments and the content of non-rendered elements. */
function stripHidden(html: string): string {
  return html
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(/<(script|style|noscript|template|svg)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, " ");
}

const BLOCK_TAGS =
  /<\/?(p|div|br|hr|li|ul|ol|h[1-6]|tr|table|section|article|header|footer|nav|main|aside|blockquote|pre|title|dd|dt)\b[^>]*>/gi;

/** Readable text of an HTML document: one line per block, whitespace collapsed, blank lines dropped. */
export function htmlToText(html: string): string {
  const text = decodeEntities(
    stripHidden(html)
      .replace(BLOCK_TAGS, "\n")
      .replace(/<[^>]*>/g, " "),
  );
  return text
    .split("\n")
    .map((line) => line.replace(/[ \t\f\v\r\u00a0]+/g, " ").trim())
    .filter((line) => line !== "")
    .join("\n")
    .trim();
}

/** Parses the attributes of one start tag (names lowercased, values entity-decoded). */
export function parseAttributes(tag: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  const inner = tag.replace(/^<[^\s>/]+/, "").replace(/\/?>$/, "");
  const pattern = /([^\s=/>"']+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>"']+)))?/g;
  for (const match of inner.matchAll(pattern)) {
    const name = (match[1] ?? "").toLowerCase();
    if (name === "" || Object.prototype.hasOwnProperty.call(attrs, name)) continue;
    attrs[name] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? "");
  }
  return attrs;
}

const clean = (text: string): string =>
  decodeEntities(text.replace(/<[^>]*>/g, " "))
    .replace(/\s+/g, " ")
    .trim();

/** Title, description, canonical link and language of an HTML document. */
export function extractMetadata(html: string, baseUrl: string): PageMetadata {
  const visible = stripHidden(html);
  const title = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(visible)?.[1];
  let description: string | null = null;
  for (const tag of visible.match(/<meta\b[^>]*>/gi) ?? []) {
    const attrs = parseAttributes(tag);
    const name = (attrs.name ?? attrs.property ?? "").toLowerCase();
    if ((name === "description" || name === "og:description") && attrs.content !== undefined) {
      description ??= attrs.content.trim();
    }
  }
  let canonical: string | null = null;
  for (const tag of visible.match(/<link\b[^>]*>/gi) ?? []) {
    const attrs = parseAttributes(tag);
    const rel = (attrs.rel ?? "").toLowerCase().split(/\s+/);
    if (rel.includes("canonical") && attrs.href !== undefined) {
      canonical ??= resolveHttp(attrs.href, baseUrl);
    }
  }
  const htmlTag = /<html\b[^>]*>/i.exec(visible)?.[0];
  const lang = htmlTag === undefined ? undefined : parseAttributes(htmlTag).lang;
  return {
    title: title === undefined ? null : clean(title),
    description,
    canonical,
    lang: lang === undefined || lang === "" ? null : lang,
  };
}

function resolveHttp(href: string, baseUrl: string): string | null {
  try {
    const url = new URL(href.trim(), baseUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") return null;
    url.hash = "";
    return url.href;
  } catch {
    return null;
  }
}

/** The distinct http(s) links of an HTML document, in document order (at most MAX_LINKS). */
export function extractLinks(html: string, baseUrl: string): PageLink[] {
  const links: PageLink[] = [];
  const seen = new Set<string>();
  const pattern = /<a\b[^>]*>([\s\S]*?)(?=<a\b|<\/a\s*>|$)/gi;
  for (const match of stripHidden(html).matchAll(pattern)) {
    const open = /^<a\b[^>]*>/i.exec(match[0])?.[0] ?? "";
    const href = parseAttributes(open).href;
    const url = href === undefined ? null : resolveHttp(href, baseUrl);
    if (url === null || seen.has(url)) continue;
    seen.add(url);
    links.push({ url, text: clean(match[1] ?? "") });
    if (links.length >= MAX_LINKS) break;
  }
  return links;
}
