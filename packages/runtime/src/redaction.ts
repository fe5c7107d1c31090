/**
 * The run-scoped taint set (spec B.9): every credential value runx delivered is scrubbed
 * from output boundaries and replaced by `[redacted-credential]`. Structured output is decoded
 * first and redacted per string, keys included, so JSON escapes cannot spell a secret back
 * together.
 *
 * What is matched, for a secret of at least {@link DERIVED_MIN_SECRET_BYTES} UTF-8 bytes
 * (shorter secrets are matched only as their exact value: their encodings are short enough to
 * turn up by chance in ordinary output, and redacting those would be noise, not protection):
 * - the exact value, and any mix of its characters and percent-escapes of their UTF-8 bytes
 *   (hex digits in either case; `+` for a space), which covers encodeURIComponent, form
 *   encoding and a fully escaped value;
 * - its UTF-8 bytes in hex, contiguous or one `\x` escape per byte, letters in any case;
 * - base64 of the value alone (standard and URL-safe alphabets, padded or not) and, for the
 *   value inside a longer string (a Basic credential `user:secret`), the characters that
 *   depend on the secret alone at each of the three byte alignments, in both alphabets.
 *   Up to three characters either side of that inner part mix in neighbouring bytes and
 *   are left, so they can carry a few bits of the secret's first and last byte.
 * Not matched: other encodings (base32, quoted-printable, HTML entities, `\u` escapes in
 * non-JSON text, hex of UTF-16), transformed values (reversed, compressed, encrypted, hashed,
 * encoded twice), hex with separators between bytes or encodings wrapped across lines, and a
 * value split across separately scrubbed strings or stream chunks. Redaction guards against a
 * credential leaking by accident; it cannot stop a skill that means to smuggle it out.
 */

/** What replaces a tainted value. */
export const REDACTION_MARKER = "[redacted-credential]";
/** Containers nested deeper than this are replaced wholesale. */
export const REDACTION_MAX_DEPTH = 128;
/** Secrets shorter than this (in UTF-8 bytes) are matched only as their exact value. */
export const DERIVED_MIN_SECRET_BYTES = 6;

/** A set of secret values and the forms they may take in output. */
export interface TaintSet {
  /** Number of distinct patterns scrubbed (secrets plus derived encodings). */
  readonly patternCount: number;
  /** Adds secrets delivered later in the run. */
  add(...secrets: string[]): void;
  /** True when `text` contains any tainted form. */
  taints(text: string): boolean;
  /** Replaces every tainted form in `text`. */
  redactText(text: string): string;
  /** Replaces tainted forms in raw bytes (matched on their UTF-8 encoding). */
  redactBytes(bytes: Uint8Array): Uint8Array;
  /** Redacts every string and key of a decoded JSON value; colliding keys get `#2`, `#3`, ... */
  redactJson(value: unknown): unknown;
  /** Parses JSON text and redacts it structurally; non-JSON text is redacted as text. */
  redactJsonText(text: string): string;
}

/**
 * One matched form of a secret as two regular-expression sources: over text (`text`) and over
 * the latin1 view of UTF-8 bytes (`bytes`), with the shortest text it can match (`length`,
 * for longest-first ordering).
 */
export interface SecretPattern {
  text: string;
  bytes: string;
  length: number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function latin1OfUtf8(text: string): string {
  return Buffer.from(text, "utf8").toString("latin1");
}

/** Two hex digits of `byte`, letters in either case. */
function hexByte(byte: number): string {
  return [...byte.toString(16).padStart(2, "0")]
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join("");
}

function literal(form: string): SecretPattern {
  const source = escapeRegExp(form);
  return { text: source, bytes: source, length: form.length };
}

/** The value with any of its characters percent-escaped (and `+` for a space). */
function percentPattern(secret: string): SecretPattern {
  const text: string[] = [];
  const bytes: string[] = [];
  for (const ch of secret) {
    const escaped = [...Buffer.from(ch, "utf8")].map((b) => `%${hexByte(b)}`).join("");
    const extra = ch === " " ? "|\\+" : "";
    text.push(`(?:${escapeRegExp(ch)}|${escaped}${extra})`);
    bytes.push(`(?:${escapeRegExp(latin1OfUtf8(ch))}|${escaped}${extra})`);
  }
  return { text: text.join(""), bytes: bytes.join(""), length: secret.length };
}

/**
 * The base64 characters that depend only on the secret when it starts `align` bytes into a
 * 3-byte group: character k covers bits [6k, 6k+6) of the stream, so it is the secret's alone
 * when that window lies inside the secret's bits [8·align, 8·(align+n)).
 */
function base64Inner(bytes: Buffer, align: number): string {
  const encoded = Buffer.concat([Buffer.alloc(align), bytes, Buffer.alloc(3)]).toString("base64");
  return encoded.slice(Math.ceil((8 * align) / 6), Math.floor((8 * (align + bytes.length)) / 6));
}

function urlSafe(base64: string): string {
  return base64.replace(/\+/g, "-").replace(/\//g, "_");
}

/** Every form of one secret that is scrubbed, the exact value first. */
export function secretPatterns(secret: string): SecretPattern[] {
  if (secret === "") return [];
  const bytes = Buffer.from(secret, "utf8");
  if (bytes.length < DERIVED_MIN_SECRET_BYTES) {
    return [
      {
        text: escapeRegExp(secret),
        bytes: escapeRegExp(latin1OfUtf8(secret)),
        length: secret.length,
      },
    ];
  }
  const hex = [...bytes].map(hexByte);
  const escapedHex = hex.map((digits) => `\\\\x${digits}`).join("");
  const out: SecretPattern[] = [
    percentPattern(secret),
    { text: hex.join(""), bytes: hex.join(""), length: 2 * bytes.length },
    { text: escapedHex, bytes: escapedHex, length: 4 * bytes.length },
  ];
  const standard = bytes.toString("base64");
  const base64 = new Set<string>([standard, standard.replace(/=+$/, "")]);
  for (const align of [0, 1, 2]) base64.add(base64Inner(bytes, align));
  for (const form of [...base64]) base64.add(urlSafe(form));
  for (const form of base64) out.push(literal(form));
  return out;
}

/**
 * V8 stops optimising a regular expression whose source passes about 20 KB (no first-character
 * dispatch), and one alternation of a long secret's forms then scans output several times
 * slower; the patterns are compiled in batches under this size instead.
 */
const BATCH_SOURCE_CHARS = 16 * 1024;

function batches(sources: readonly string[]): RegExp[] {
  const out: RegExp[] = [];
  let batch: string[] = [];
  let size = 0;
  for (const source of sources) {
    if (batch.length > 0 && size + source.length > BATCH_SOURCE_CHARS) {
      out.push(new RegExp(batch.join("|"), "g"));
      batch = [];
      size = 0;
    }
    batch.push(source);
    size += source.length + 1;
  }
  if (batch.length > 0) out.push(new RegExp(batch.join("|"), "g"));
  return out;
}

/**
 * Replaces every stretch matched by any of `patterns` with `marker`. Matches of different
 * batches may overlap, so their ranges are merged first: the result is the same as one
 * alternation, and each maximal covered stretch becomes one marker.
 */
function replaceAll(text: string, patterns: readonly RegExp[], marker: string): string {
  const only = patterns.length === 1 ? patterns[0] : undefined;
  if (only !== undefined) return text.replace(only, marker);
  const ranges: Array<[number, number]> = [];
  for (const pattern of patterns) {
    pattern.lastIndex = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text))
      ranges.push([m.index, m.index + m[0].length]);
  }
  if (ranges.length === 0) return text;
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = "";
  let at = 0;
  let open: [number, number] | undefined;
  for (const range of ranges) {
    if (open !== undefined && range[0] < open[1]) {
      open[1] = Math.max(open[1], range[1]);
      continue;
    }
    if (open !== undefined) out += text.slice(at, open[0]) + marker;
    at = open?.[1] ?? at;
    open = [range[0], range[1]];
  }
  if (open !== undefined) out += text.slice(at, open[0]) + marker;
  return out + text.slice(open?.[1] ?? at);
}

/** Creates the taint set of a run from the secret values it delivered. */
export function createTaintSet(secrets: readonly string[] = []): TaintSet {
  const patterns = new Map<string, SecretPattern>();
  let textPatterns: RegExp[] = [];
  let bytePatterns: RegExp[] = [];
  const markerBytes = latin1OfUtf8(REDACTION_MARKER);

  const rebuild = (): void => {
    // Longest first, so a secret inside one of its own encodings (or a longer secret that
    // contains a shorter one) cannot leave a remnant.
    const sorted = [...patterns.values()].sort((a, b) => b.length - a.length);
    textPatterns = batches(sorted.map((p) => p.text));
    bytePatterns = batches(sorted.map((p) => p.bytes));
  };

  const redactText = (text: string): string =>
    textPatterns.length === 0 ? text : replaceAll(text, textPatterns, REDACTION_MARKER);

  const redactValue = (value: unknown, depth: number): unknown => {
    if (typeof value === "string") return redactText(value);
    if (value === null || typeof value !== "object") return value;
    if (depth >= REDACTION_MAX_DEPTH) return REDACTION_MARKER;
    if (Array.isArray(value)) return value.map((item: unknown) => redactValue(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
      const base = redactText(key);
      let name = base;
      for (let n = 2; Object.prototype.hasOwnProperty.call(out, name); n++) name = `${base}#${n}`;
      Object.defineProperty(out, name, {
        value: redactValue(item, depth + 1),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  };

  const taintSet: TaintSet = {
    get patternCount() {
      return patterns.size;
    },
    add(...more) {
      for (const secret of more)
        for (const pattern of secretPatterns(secret)) patterns.set(pattern.text, pattern);
      rebuild();
    },
    taints(text) {
      return textPatterns.some((pattern) => {
        pattern.lastIndex = 0;
        const found = pattern.test(text);
        pattern.lastIndex = 0;
        return found;
      });
    },
    redactText,
    redactBytes(bytes) {
      if (bytePatterns.length === 0) return bytes;
      const binary = Buffer.from(bytes).toString("latin1");
      return new Uint8Array(Buffer.from(replaceAll(binary, bytePatterns, markerBytes), "latin1"));
    },
    redactJson: (value) => redactValue(value, 0),
    redactJsonText(text) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return redactText(text);
      }
      return JSON.stringify(redactValue(value, 0));
    },
  };
  taintSet.add(...secrets);
  return taintSet;
}
