/**
 * The run-scoped taint set (spec B.9): every credential value runx delivered is scrubbed
 * from output boundaries and replaced by `[redacted-credential]`. For secrets of six or
 * more characters, derived encodings of eight or more characters are scrubbed too (URL
 * and form encoding; base64 standard, unpadded, URL-safe and URL-safe unpadded).
 * Structured output is decoded first and redacted per string, keys included, so JSON
 * escapes cannot spell a secret back together.
 */

/** What replaces a tainted value. */
export const REDACTION_MARKER = "[redacted-credential]";
/** Containers nested deeper than this are replaced wholesale. */
export const REDACTION_MAX_DEPTH = 128;

const DERIVED_MIN_SECRET = 6;
const DERIVED_MIN_LENGTH = 8;

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

/** The scrubbed forms of one secret, the exact value first. */
export function secretForms(secret: string): string[] {
  if (secret === "") return [];
  const forms = new Set<string>([secret]);
  if (secret.length >= DERIVED_MIN_SECRET) {
    const bytes = Buffer.from(secret, "utf8");
    const standard = bytes.toString("base64");
    const urlSafe = bytes.toString("base64url");
    const derived = [
      encodeURIComponent(secret),
      new URLSearchParams({ v: secret }).toString().slice(2),
      standard,
      standard.replace(/=+$/, ""),
      urlSafe.padEnd(standard.length, "="),
      urlSafe,
    ];
    for (const form of derived) if (form.length >= DERIVED_MIN_LENGTH) forms.add(form);
  }
  return [...forms];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function latin1OfUtf8(text: string): string {
  return Buffer.from(text, "utf8").toString("latin1");
}

function alternation(patterns: readonly string[]): RegExp | undefined {
  if (patterns.length === 0) return undefined;
  // Longest first, so a secret inside one of its own encodings cannot leave a remnant.
  const sorted = [...patterns].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map(escapeRegExp).join("|"), "g");
}

/** Creates the taint set of a run from the secret values it delivered. */
export function createTaintSet(secrets: readonly string[] = []): TaintSet {
  const patterns = new Set<string>();
  let textPattern: RegExp | undefined;
  let bytePattern: RegExp | undefined;
  const markerBytes = latin1OfUtf8(REDACTION_MARKER);

  const rebuild = (): void => {
    textPattern = alternation([...patterns]);
    bytePattern = alternation([...patterns].map(latin1OfUtf8));
  };

  const redactText = (text: string): string =>
    textPattern === undefined ? text : text.replace(textPattern, REDACTION_MARKER);

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
      for (const secret of more) for (const form of secretForms(secret)) patterns.add(form);
      rebuild();
    },
    taints(text) {
      return textPattern !== undefined && new RegExp(textPattern.source).test(text);
    },
    redactText,
    redactBytes(bytes) {
      if (bytePattern === undefined) return bytes;
      const binary = Buffer.from(bytes).toString("latin1");
      return new Uint8Array(Buffer.from(binary.replace(bytePattern, markerBytes), "latin1"));
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
