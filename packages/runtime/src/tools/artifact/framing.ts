/**
 * Page framing for `artifact.read` (data-and-receipts C.2). Pure: a window of source bytes in,
 * the page length and decoded data out.
 *
 * - utf8: never splits a character; a page that would end inside one ends before it.
 * - json_array: records of one top-level JSON array, returned as their original (trimmed)
 *   text. The first page may start with whitespace and one `name = ` assignment prefix; a
 *   page ends just past a record's `,` or the closing `]`, and never inside a record. Later
 *   pages start from a previous `next_offset`, whose preceding byte (`,` or `]`) tells the
 *   framer where in the array it is, so paging needs no state beyond the offset.
 */
import { RuntimeError } from "../../errors.js";
import { decodeUtf8, isContinuationByte, utf8BoundaryAtOrBefore } from "../file-io.js";

/** Longest assignment prefix (`window.data = [`) the first json_array page may skip. */
export const JSON_ARRAY_MAX_PREFIX = 64 * 1024;

/** Where a json_array page starts: at the beginning, after a `,`, or after the closing `]`. */
export type JsonArrayPosition = "start" | "record" | "closed";

/** A framed json_array page. */
export interface JsonArrayPage {
  length: number;
  records: string[];
  /** The closing `]` is inside this page. */
  closed: boolean;
}

const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const EQUALS = 0x3d;

function invalid(message: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `artifact.read: ${message}`, { path: "offset" });
}

function tooLarge(message: string): RuntimeError {
  return new RuntimeError("LIMIT_EXCEEDED", `artifact.read: ${message}`, { path: "max_bytes" });
}

/**
 * Frames a utf8 page. `window` holds the bytes from `offset` on: up to `maxBytes`, plus one
 * look-ahead byte when the artifact continues past the page.
 */
export function frameUtf8(
  window: Buffer,
  maxBytes: number,
  offset: number,
): { length: number; text: string } {
  if (isContinuationByte(window[0])) {
    throw invalid(`offset ${offset} is not a character boundary`);
  }
  const length = utf8BoundaryAtOrBefore(window, maxBytes);
  if (length === 0 && window.length > 0) {
    throw tooLarge(`max_bytes ${maxBytes} is smaller than the character at offset ${offset}`);
  }
  return { length, text: decodeUtf8(window.subarray(0, length), `the page at offset ${offset}`) };
}

function isWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

function skipWhitespace(window: Buffer, from: number): number {
  let i = from;
  while (i < window.length && isWhitespace(window[i])) i++;
  return i;
}

/** Index just past the opening `[`, after whitespace and an optional assignment prefix. */
function openArray(window: Buffer, reachesEnd: boolean): number {
  const start = skipWhitespace(window, 0);
  if (window[start] === OPEN_BRACKET) return start + 1;
  const limit = Math.min(window.length, start + JSON_ARRAY_MAX_PREFIX);
  const equals = window.subarray(start, limit).indexOf(EQUALS);
  const cutShort = !reachesEnd && limit === window.length;
  if (equals < 0) {
    if (cutShort && window.length - start < JSON_ARRAY_MAX_PREFIX) {
      throw tooLarge("the array prefix does not fit in one page");
    }
    throw invalid("the artifact does not start with a JSON array");
  }
  const bracket = skipWhitespace(window, start + equals + 1);
  if (bracket === window.length && cutShort) {
    throw tooLarge("the array prefix does not fit in one page");
  }
  if (window[bracket] !== OPEN_BRACKET)
    throw invalid("the artifact does not start with a JSON array");
  return bracket + 1;
}

/** Index of the `,` or `]` ending the record that starts at `from`, or -1 past the window. */
function recordEnd(window: Buffer, from: number): number {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let k = from; k < window.length; k++) {
    const byte = window[k];
    if (inString) {
      if (escaped) escaped = false;
      else if (byte === BACKSLASH) escaped = true;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (byte === QUOTE) inString = true;
    else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) depth++;
    else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      if (depth === 0) {
        if (byte === CLOSE_BRACKET) return k;
        throw invalid("unbalanced '}' in a record");
      }
      depth--;
    } else if (byte === COMMA && depth === 0) return k;
  }
  return -1;
}

/** Validates one record and returns its trimmed original text. */
function recordText(window: Buffer, from: number, to: number, offset: number): string {
  const first = skipWhitespace(window, from);
  let last = to;
  while (last > first && isWhitespace(window[last - 1])) last--;
  if (first === last) throw invalid(`empty record at offset ${offset + from}`);
  const text = decodeUtf8(window.subarray(first, last), `the record at offset ${offset + first}`);
  try {
    JSON.parse(text);
  } catch {
    throw invalid(`the record at offset ${offset + first} is not valid JSON`);
  }
  return text;
}

/** After the closing `]`: only whitespace may follow, and it is consumed when the page reaches the end. */
function afterClose(
  window: Buffer,
  from: number,
  records: string[],
  reachesEnd: boolean,
): JsonArrayPage {
  const next = skipWhitespace(window, from);
  if (next < window.length) throw invalid("data follows the closing ']' of the JSON array");
  if (reachesEnd) return { length: next, records, closed: true };
  if (records.length === 0 && from === 0) {
    throw tooLarge("whitespace after the JSON array does not fit in one page");
  }
  return { length: from, records, closed: true };
}

/**
 * Frames a json_array page. `window` holds at most `max_bytes` from `offset`; `reachesEnd`
 * says whether it runs to the end of the artifact.
 */
export function frameJsonArray(
  window: Buffer,
  opts: { position: JsonArrayPosition; reachesEnd: boolean; offset: number },
): JsonArrayPage {
  const records: string[] = [];
  if (opts.position === "closed") return afterClose(window, 0, records, opts.reachesEnd);
  let from = 0;
  if (opts.position === "start") {
    from = openArray(window, opts.reachesEnd);
    const first = skipWhitespace(window, from);
    if (window[first] === CLOSE_BRACKET)
      return afterClose(window, first + 1, records, opts.reachesEnd);
  }
  let consumed = 0;
  for (;;) {
    const end = recordEnd(window, from);
    if (end < 0) {
      if (opts.reachesEnd) throw invalid("the artifact ends before the JSON array closes");
      if (records.length > 0) return { length: consumed, records, closed: false };
      throw tooLarge(`the record at offset ${opts.offset + from} is larger than max_bytes`);
    }
    records.push(recordText(window, from, end, opts.offset));
    consumed = end + 1;
    if (window[end] === CLOSE_BRACKET)
      return afterClose(window, consumed, records, opts.reachesEnd);
    from = consumed;
  }
}
