/**
 * `index.jsonl`, the receipt store's index: an append-only journal with one JSON line per
 * stored receipt, in write order. A write appends its lines (one `write` under the store
 * lock), so its cost does not grow with the store; the journal is a recoverable projection
 * of the receipt files and is rebuilt from them when missing or damaged.
 *
 * Each line carries what a newest-first listing needs without opening receipt files:
 * `created_at`, the ids the receipt lists as lineage children (and the paused receipt it
 * continues, which the console's graph pages follow), and `max_created_at`, the
 * greatest `created_at` of this line and every line before it. Reading the journal from its
 * end, a reader can therefore stop as soon as the rows it holds rank above everything it
 * has not read yet.
 *
 * A line is complete only with its newline: a torn last line (a crash mid-append) is ignored
 * by readers and makes the next write rebuild the journal.
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Receipt } from "./model.js";
import { referencedReceiptId } from "./identity.js";
import { errnoCode, receiptFileNames } from "./store-files.js";

/** File name of the journal. */
export const STORE_JOURNAL_FILE = "index.jsonl";

/**
 * The line format every line written now carries as `v`. Lines without it were written
 * before lines named the paused receipt a continuation resumes (`previous`): a journal
 * holding one may lack links the console's graph pages follow, and is rebuilt from the
 * files before they are computed from it (ReceiptStore.upgradeJournal).
 */
export const JOURNAL_LINE_VERSION = 2;

/** One journal line. */
export interface JournalEntry {
  /** {@link JOURNAL_LINE_VERSION} (absent on lines of the earlier format). */
  v?: number;
  receipt_id: string;
  file_name: string;
  created_at: string;
  /** Greatest `created_at` of this line and all lines before it. */
  max_created_at: string;
  /** Receipt ids this receipt lists as lineage children (omitted when none). */
  children?: string[];
  /** The paused receipt this one continues (`lineage.previous`), when it names one. */
  previous?: string;
  /** Set when the writer knew another receipt lists this one as a child. */
  child?: true;
}

/** True when every line is of the current format (an empty journal is). */
export function journalIsCurrent(entries: readonly JournalEntry[]): boolean {
  return entries.every((e) => e.v === JOURNAL_LINE_VERSION);
}

/** Child receipt ids of a receipt's lineage. */
export function lineageChildren(receipt: Receipt): string[] {
  const ids: string[] = [];
  for (const c of receipt.lineage?.children ?? []) {
    const id = referencedReceiptId(c);
    if (id !== undefined) ids.push(id);
  }
  return ids;
}

/** The journal line of a receipt stored in `fileName`, before `max_created_at` is known. */
export function journalEntry(
  receipt: Receipt,
  fileName: string,
): Omit<JournalEntry, "max_created_at"> {
  const children = lineageChildren(receipt);
  const previous =
    receipt.lineage?.previous === undefined
      ? undefined
      : referencedReceiptId(receipt.lineage.previous);
  return {
    v: JOURNAL_LINE_VERSION,
    receipt_id: receipt.id,
    file_name: fileName,
    created_at: receipt.created_at,
    ...(children.length > 0 ? { children } : {}),
    ...(previous !== undefined ? { previous } : {}),
  };
}

/**
 * Orders entries for a journal written from scratch: by `created_at`, ties by id, children
 * marked; `max_created_at` filled in from `previousMax` on.
 */
export function sealEntries(
  entries: readonly Omit<JournalEntry, "max_created_at">[],
  previousMax: string,
  sort: boolean,
): JournalEntry[] {
  const listed = new Set<string>();
  for (const e of entries) for (const c of e.children ?? []) listed.add(c);
  const ordered = sort
    ? [...entries].sort((a, b) =>
        a.created_at === b.created_at
          ? a.receipt_id < b.receipt_id
            ? -1
            : 1
          : a.created_at < b.created_at
            ? -1
            : 1,
      )
    : entries;
  let max = previousMax;
  return ordered.map((e) => {
    if (e.created_at > max) max = e.created_at;
    const { child: _child, ...rest } = e as JournalEntry;
    return {
      ...rest,
      max_created_at: max,
      ...(listed.has(e.receipt_id) ? { child: true as const } : {}),
    };
  });
}

/** The text of journal lines. */
export function journalText(entries: readonly JournalEntry[]): string {
  return entries.map((e) => `${JSON.stringify(e)}\n`).join("");
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string");
}

/** Parses one complete journal line; undefined when it is not an entry. */
export function parseJournalLine(line: string): JournalEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const e = value as Record<string, unknown>;
  if (
    typeof e.receipt_id !== "string" ||
    typeof e.file_name !== "string" ||
    typeof e.created_at !== "string" ||
    typeof e.max_created_at !== "string" ||
    (e.children !== undefined && !isStringArray(e.children)) ||
    (e.previous !== undefined && typeof e.previous !== "string") ||
    (e.v !== undefined && !Number.isSafeInteger(e.v)) ||
    (e.child !== undefined && e.child !== true)
  ) {
    return undefined;
  }
  try {
    if (!receiptFileNames(e.receipt_id).includes(e.file_name)) return undefined;
  } catch {
    return undefined;
  }
  return value as JournalEntry;
}

/** What the end of the journal looks like: missing, torn, or complete with its last line. */
export type JournalTail =
  { state: "missing" } | { state: "torn" } | { state: "ok"; last: JournalEntry | undefined };

const TAIL_CHUNK = 64 * 1024;

/**
 * Reads the journal's last complete line (a few kilobytes from the end, whatever the
 * journal's size) and tells whether the journal ends cleanly.
 */
export function readJournalTail(dir: string): JournalTail {
  let fd: number;
  try {
    fd = openSync(join(dir, STORE_JOURNAL_FILE), "r");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return { state: "missing" };
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return { state: "ok", last: undefined };
    let text = "";
    let position = size;
    while (position > 0) {
      const length = Math.min(TAIL_CHUNK, position);
      position -= length;
      const buffer = Buffer.alloc(length);
      readSync(fd, buffer, 0, length, position);
      text = buffer.toString("utf8") + text;
      if (!text.endsWith("\n")) return { state: "torn" };
      const start = text.lastIndexOf("\n", text.length - 2);
      if (start >= 0 || position === 0) {
        const last = parseJournalLine(text.slice(start + 1, -1));
        return last === undefined ? { state: "torn" } : { state: "ok", last };
      }
    }
    return { state: "torn" };
  } finally {
    closeSync(fd);
  }
}

/** Appends complete lines with one write call (the caller holds the store lock). */
export function appendJournal(dir: string, text: string): void {
  const fd = openSync(join(dir, STORE_JOURNAL_FILE), "a", 0o600);
  try {
    const bytes = Buffer.from(text, "utf8");
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
  } finally {
    closeSync(fd);
  }
}

/**
 * The journal's complete lines from the end backwards, in chunks: each yielded array holds
 * the lines of one chunk, last line first. A torn last line is skipped; a complete line that
 * is not an entry throws `JournalDamaged`. Yields nothing when the journal is missing.
 */
export function* readJournalBackwards(dir: string): Generator<JournalEntry[]> {
  let fd: number;
  try {
    fd = openSync(join(dir, STORE_JOURNAL_FILE), "r");
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return;
    throw error;
  }
  try {
    let position = fstatSync(fd).size;
    let carry = Buffer.alloc(0);
    let first = true;
    while (position > 0) {
      const length = Math.min(TAIL_CHUNK, position);
      position -= length;
      const buffer = Buffer.alloc(length + carry.length);
      readSync(fd, buffer, 0, length, position);
      carry.copy(buffer, length);
      let end = buffer.length;
      if (first) {
        // Bytes after the last newline are a torn line: not part of the journal.
        end = buffer.lastIndexOf(0x0a) + 1;
        if (end === 0 && position > 0) {
          carry = buffer;
          continue;
        }
        first = false;
      }
      // The bytes before the first newline may be the tail of a line that starts earlier.
      const cut = position > 0 ? buffer.indexOf(0x0a) + 1 : 0;
      if (cut === 0 && position > 0) {
        carry = buffer.subarray(0, end);
        continue;
      }
      const lines = buffer.toString("utf8", cut, end).split("\n");
      lines.pop(); // after the final newline
      const entries: JournalEntry[] = [];
      for (let i = lines.length - 1; i >= 0; i--) {
        const entry = parseJournalLine(lines[i] as string);
        if (entry === undefined) throw new JournalDamaged();
        entries.push(entry);
      }
      yield entries;
      carry = buffer.subarray(0, cut);
    }
  } finally {
    closeSync(fd);
  }
}

/** A complete journal line that is not an entry: the journal must be rebuilt. */
export class JournalDamaged extends Error {
  constructor() {
    super("receipt store journal has a damaged line");
  }
}
