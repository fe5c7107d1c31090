/**
 * The append-only receipt store: one `sha256-<hex>.json` file per receipt (compact JSON in
 * struct order) plus `index.jsonl`, an append-only journal that is a recoverable projection
 * of the files (store-journal.ts). Every receipt is checked
 * (content address and proof under the store's policy) before it is written and when it
 * is read. Mutations hold `.receipt-store.lock`. Messages name the store by a safe label,
 * never by its path.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";
import { ensureStateDir } from "../workspace.js";
import type { Receipt } from "./model.js";
import { decodeReceipt } from "./shape.js";
import {
  acquireStoreLock,
  errnoCode,
  receiptFileName,
  receiptFileNames,
  receiptIdFromFileName,
  receiptStoreLabel,
  STORE_INDEX_FILE,
  storeIoError,
  unixNanos,
  writeFileAtomic,
} from "./store-files.js";
import { byReceiptId, RECEIPT_STORE_INDEX_SCHEMA, sameEntries } from "./store-index.js";
import {
  appendJournal,
  JournalDamaged,
  journalEntry,
  journalIsCurrent,
  journalText,
  parseJournalLine,
  readJournalBackwards,
  readJournalTail,
  sealEntries,
  STORE_JOURNAL_FILE,
} from "./store-journal.js";
import type { JournalEntry } from "./store-journal.js";
import type { ReceiptStoreIndex, ReceiptStoreIndexEntry } from "./store-index.js";
import { parseStoredReceipt } from "./stored-receipt.js";
import { isContentAddressed, verifyReceiptProof } from "./verify.js";
import type { SignaturePolicy } from "./verifier.js";

export { RECEIPT_STORE_INDEX_SCHEMA } from "./store-index.js";
export type { ReceiptStoreIndex, ReceiptStoreIndexEntry } from "./store-index.js";
export type { JournalEntry } from "./store-journal.js";

/** Options of a store. */
export interface ReceiptStoreOptions {
  dir: string;
  /** Which signatures reads and writes accept. */
  policy: SignaturePolicy;
  /** Shown in messages instead of the path; defaults to `receiptStoreLabel(dir)`. */
  label?: string;
  lockTimeoutMs?: number;
}

/** What a write did: `written` is false for an identical rewrite. */
export interface WriteOutcome {
  receipt_id: string;
  file_name: string;
  written: boolean;
}

/** One receipt file: the receipt id its name spells and the name. */
export interface StoredFile {
  id: string;
  name: string;
}

/** A receipt store over one directory. */
export class ReceiptStore {
  readonly dir: string;
  readonly label: string;
  readonly policy: SignaturePolicy;
  private readonly lockTimeoutMs: number;

  constructor(options: ReceiptStoreOptions) {
    this.dir = options.dir;
    this.policy = options.policy;
    this.label = options.label ?? receiptStoreLabel(options.dir);
    this.lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
  }

  private invalid(message: string, details: Record<string, unknown> = {}): RuntimeError {
    return new RuntimeError("RECEIPT_INVALID", `${message} in store ${this.label}`, {
      store: this.label,
      ...details,
    });
  }

  /** Decodes and checks content address and proof; returns the normalised receipt. */
  private admit(receipt: Receipt): Receipt {
    const decoded = decodeReceipt(receipt);
    if (!isContentAddressed(decoded, true)) {
      throw this.invalid("receipt id is not its content address", { receipt_id: decoded.id });
    }
    const findings = verifyReceiptProof(decoded, this.policy, true);
    if (findings.length > 0) {
      throw this.invalid("receipt proof is invalid", { receipt_id: decoded.id, findings });
    }
    return decoded;
  }

  private async withLock<T>(action: () => T): Promise<T> {
    try {
      // Component by component: a symlinked `.runx` or receipts dir is refused, not followed.
      ensureStateDir(this.dir);
    } catch (error) {
      if (error instanceof RuntimeError) throw error;
      throw storeIoError(this.label, "create", error);
    }
    const release = await acquireStoreLock(this.dir, this.label, this.lockTimeoutMs);
    try {
      return action();
    } finally {
      release();
    }
  }

  /** Writes one receipt (verified first); an identical rewrite is a no-op that repairs the index. */
  async write(receipt: Receipt): Promise<WriteOutcome> {
    const [outcome] = await this.writeAll([receipt]);
    return outcome as WriteOutcome;
  }

  /**
   * Writes several receipts: every proof is checked before anything is written; identical
   * duplicates collapse; a different body under an existing id is RECEIPT_ALREADY_EXISTS.
   */
  async writeAll(receipts: readonly Receipt[]): Promise<WriteOutcome[]> {
    const pending = new Map<string, { receipt: Receipt; contents: string }>();
    for (const receipt of receipts) {
      const admitted = this.admit(receipt);
      // `admit` returns decodeReceipt's result, already in struct order: serializeReceipt
      // would decode it again.
      const contents = JSON.stringify(admitted);
      const earlier = pending.get(admitted.id);
      if (earlier !== undefined && earlier.contents !== contents) {
        throw this.exists(admitted.id);
      }
      pending.set(admitted.id, { receipt: admitted, contents });
    }
    return this.withLock(() => {
      const outcomes: WriteOutcome[] = [];
      const toWrite: { name: string; contents: string }[] = [];
      for (const { receipt, contents } of pending.values()) {
        const existing = this.locate(receipt.id);
        if (existing !== undefined) {
          // Identical bytes (a trailing newline tolerated) make the rewrite a no-op.
          const same = existing.text === contents || existing.text === `${contents}\n`;
          if (!same) throw this.exists(receipt.id);
          outcomes.push({ receipt_id: receipt.id, file_name: existing.name, written: false });
        } else {
          const name = receiptFileName(receipt.id);
          toWrite.push({ name, contents });
          outcomes.push({ receipt_id: receipt.id, file_name: name, written: true });
        }
      }
      for (const file of toWrite) {
        try {
          writeFileAtomic(this.dir, file.name, file.contents, true);
        } catch (error) {
          throw storeIoError(this.label, "write", error);
        }
      }
      // Only receipts this call wrote get journal lines (an identical rewrite adds none).
      this.updateIndex(
        [...pending.values()].flatMap(({ receipt }, i) =>
          outcomes[i]?.written === true
            ? [journalEntry(receipt, outcomes[i]?.file_name ?? receiptFileName(receipt.id))]
            : [],
        ),
      );
      return outcomes;
    });
  }

  private exists(id: string): RuntimeError {
    return new RuntimeError(
      "RECEIPT_ALREADY_EXISTS",
      `receipt already exists with different content in store ${this.label}`,
      { store: this.label, receipt_id: id },
    );
  }

  private readText(name: string): string {
    try {
      return readFileSync(join(this.dir, name), "utf8");
    } catch (error) {
      if (errnoCode(error) === "ENOENT") {
        throw new RuntimeError("RECEIPT_NOT_FOUND", `receipt is missing in store ${this.label}`, {
          store: this.label,
        });
      }
      throw storeIoError(this.label, "read", error);
    }
  }

  /** Receipt files in the directory (any accepted spelling), sorted by id, one per id. */
  files(): StoredFile[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return [];
      throw storeIoError(this.label, "list", error);
    }
    const found = new Map<string, StoredFile>();
    for (const name of names.sort()) {
      const id = receiptIdFromFileName(name);
      if (id === undefined) continue;
      // Canonical `sha256-` sorts before the legacy spellings and wins.
      if (!found.has(id)) found.set(id, { id, name });
    }
    return [...found.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** The file holding `id` (any accepted spelling) and its text, or undefined. */
  private locate(id: string): { name: string; text: string } | undefined {
    for (const name of receiptFileNames(id)) {
      try {
        return { name, text: readFileSync(join(this.dir, name), "utf8") };
      } catch (error) {
        if (errnoCode(error) !== "ENOENT") throw storeIoError(this.label, "read", error);
      }
    }
    return undefined;
  }

  private parseFile(file: StoredFile, text: string, verifyProof: boolean): Receipt {
    const receipt = parseStoredReceipt(this.label, file.id, text);
    return verifyProof ? this.admit(receipt) : receipt;
  }

  /** Reads the receipt with exactly this id, verifying it under the store policy. */
  read(id: string): Promise<Receipt> {
    return settle(() => this.readSync(id));
  }

  private readSync(id: string): Receipt {
    const found = this.locate(id);
    if (found === undefined) {
      throw new RuntimeError("RECEIPT_NOT_FOUND", `receipt is missing in store ${this.label}`, {
        store: this.label,
        receipt_id: id,
      });
    }
    return this.parseFile({ id, name: found.name }, found.text, true);
  }

  /**
   * The receipt with exactly this id, shape-checked but not proof-checked (for callers that
   * report its verification status themselves), or undefined when the store has none. Reads
   * one file, whatever the store's size.
   */
  find(id: string): Promise<Receipt | undefined> {
    return settle(() => {
      let found: { name: string; text: string } | undefined;
      try {
        found = this.locate(id);
      } catch (error) {
        // An id that is not a content address names no file.
        if (error instanceof RuntimeError && error.code === "RECEIPT_INVALID") return undefined;
        throw error;
      }
      return found === undefined
        ? undefined
        : this.parseFile({ id, name: found.name }, found.text, false);
    });
  }

  /** Every receipt in the store, verified, sorted by id. */
  list(): Promise<Receipt[]> {
    return settle(() => this.listSync());
  }

  private listSync(): Receipt[] {
    const receipts: Receipt[] = [];
    for (const file of this.files()) {
      receipts.push(this.parseFile(file, this.readText(file.name), true));
    }
    return receipts;
  }

  /**
   * Every receipt file decoded WITHOUT proof checks, for verifiers that must report what is
   * wrong with a tampered receipt instead of refusing to read it. Files that cannot be
   * decoded at all are listed in `unreadable` with the reason.
   */
  scan(progress?: RebuildProgress): Promise<{
    receipts: Receipt[];
    unreadable: Array<{ file_name: string; message: string }>;
  }> {
    return settle(() => this.scanSync(progress));
  }

  private scanSync(progress?: RebuildProgress): {
    receipts: Receipt[];
    unreadable: Array<{ file_name: string; message: string }>;
  } {
    const receipts: Receipt[] = [];
    const unreadable: Array<{ file_name: string; message: string }> = [];
    const files = this.files();
    for (const [i, file] of files.entries()) {
      progress?.(i + 1, files.length);
      try {
        receipts.push(this.parseFile(file, this.readText(file.name), false));
      } catch (error) {
        const message = error instanceof RuntimeError ? error.message : "unreadable";
        unreadable.push({ file_name: file.name, message });
      }
    }
    return { receipts, unreadable };
  }

  /** Journal entries of every receipt file, `progress` told after each file. */
  private journalFromFiles(verifyProof: boolean, progress?: RebuildProgress): JournalEntry[] {
    const files = this.files();
    const entries: Omit<JournalEntry, "max_created_at">[] = [];
    for (const [i, file] of files.entries()) {
      const receipt = this.parseFile(file, this.readText(file.name), verifyProof);
      entries.push(journalEntry(receipt, file.name));
      progress?.(i + 1, files.length);
    }
    return sealEntries(entries, "", true);
  }

  /**
   * Writes the journal afresh from the receipt files (atomically: readers see the old or
   * the new journal) and drops the snapshot index of earlier versions, which writes no
   * longer keep up to date.
   */
  private rebuildJournal(verifyProof: boolean, progress?: RebuildProgress): JournalEntry[] {
    const entries = this.journalFromFiles(verifyProof, progress);
    try {
      writeFileAtomic(this.dir, STORE_JOURNAL_FILE, journalText(entries), false);
      rmSync(join(this.dir, STORE_INDEX_FILE), { force: true });
    } catch (error) {
      throw storeIoError(this.label, "index write", error);
    }
    return entries;
  }

  /**
   * Appends the journal lines of newly written receipts: reads only the journal's last line,
   * whatever the store's size. A missing or torn journal is rebuilt from the files (which
   * already hold the new receipts). As in upstream's store, a write does not list the
   * directory: files added or removed out of band are found by `loadIndex`
   * (RECEIPT_INDEX_STALE) and repaired by `rebuildIndex`.
   */
  private updateIndex(additions: readonly Omit<JournalEntry, "max_created_at">[]): void {
    try {
      const tail = readJournalTail(this.dir);
      if (tail.state !== "ok") {
        this.rebuildJournal(false);
        return;
      }
      if (additions.length === 0) return;
      appendJournal(
        this.dir,
        journalText(sealEntries(additions, tail.last?.max_created_at ?? "", false)),
      );
    } catch {
      try {
        this.rebuildJournal(false);
      } catch {
        throw new RuntimeError(
          "RECEIPT_INDEX_STALE",
          `receipt store index is stale in store ${this.label}`,
          { store: this.label },
        );
      }
    }
  }

  private malformedIndex(reason: string): RuntimeError {
    return new RuntimeError(
      "RECEIPT_INDEX_MALFORMED",
      `receipt store index is malformed in store ${this.label}: ${reason}`,
      { store: this.label },
    );
  }

  /** Every journal line (a torn last line left out), or undefined when there is no journal. */
  readJournal(): JournalEntry[] | undefined {
    let text: string;
    try {
      text = readFileSync(join(this.dir, STORE_JOURNAL_FILE), "utf8");
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return undefined;
      throw storeIoError(this.label, "index read", error);
    }
    const lines = text.split("\n");
    lines.pop(); // empty after the last newline, or a torn line
    const entries: JournalEntry[] = [];
    for (const line of lines) {
      const entry = parseJournalLine(line);
      if (entry === undefined) throw this.malformedIndex("a line is not an index entry");
      entries.push(entry);
    }
    return entries;
  }

  /**
   * Loads the index, checked against the receipt files: a missing index is rebuilt, a
   * mismatch is RECEIPT_INDEX_STALE, an unreadable one RECEIPT_INDEX_MALFORMED.
   */
  async loadIndex(progress?: RebuildProgress): Promise<ReceiptStoreIndex> {
    return this.withLock(() => {
      const journal = this.readJournal();
      const entries = toIndexEntries(this.journalFromFiles(true, progress));
      if (journal === undefined) {
        return snapshot(toIndexEntries(this.rebuildJournal(true)));
      }
      if (!sameEntries(entries, toIndexEntries(journal))) {
        throw new RuntimeError(
          "RECEIPT_INDEX_STALE",
          `receipt store index is stale in store ${this.label}: index entries do not match receipt JSON files`,
          { store: this.label },
        );
      }
      return snapshot(entries);
    });
  }

  /**
   * The journal, rebuilt from the files first when it holds a line of an earlier format
   * (store-journal.ts JOURNAL_LINE_VERSION) or is missing or damaged; `progress` is told
   * how far a rebuild has got. Undefined when the store has no receipts at all.
   */
  async upgradeJournal(progress?: RebuildProgress): Promise<JournalEntry[] | undefined> {
    const current = (): JournalEntry[] | undefined => {
      try {
        const journal = this.readJournal();
        return journal !== undefined && journalIsCurrent(journal) ? journal : undefined;
      } catch (error) {
        if (error instanceof RuntimeError && error.code === "RECEIPT_INDEX_MALFORMED")
          return undefined;
        throw error;
      }
    };
    const found = current();
    if (found !== undefined) return found;
    if (this.files().length === 0) return this.readJournal();
    // Under the lock, checked again: a writer may have rebuilt it meanwhile.
    return this.withLock(() => current() ?? this.rebuildJournal(false, progress));
  }

  /** Rebuilds the index from the (verified) receipt files. */
  async rebuildIndex(progress?: RebuildProgress): Promise<ReceiptStoreIndex> {
    return this.withLock(() => snapshot(toIndexEntries(this.rebuildJournal(true, progress))));
  }

  /**
   * Receipts newest first (`created_at`, ties by id, both descending), read from the end of
   * the journal: the work grows with the page, not with the store. Receipts another receipt
   * lists as a lineage child are left out unless `includeChildren`; `accept` is asked about
   * candidates in rank order and may refuse them (filters). `before` starts the page after
   * that position. A missing or damaged journal is rebuilt first (`progress` is told).
   */
  async newestFirst(options: {
    limit: number;
    includeChildren: boolean;
    before?: { created_at: string; receipt_id: string };
    accept?: (entries: JournalEntry[]) => Promise<boolean[]>;
    progress?: RebuildProgress;
  }): Promise<JournalEntry[]> {
    const tail = readJournalTail(this.dir);
    if (tail.state === "missing") {
      if (this.files().length === 0) return [];
      await this.withLock(() => {
        if (readJournalTail(this.dir).state === "missing") {
          this.rebuildJournal(false, options.progress);
        }
      });
    }
    try {
      return await this.pageFromJournal(options);
    } catch (error) {
      if (!(error instanceof JournalDamaged)) throw error;
      await this.withLock(() => this.rebuildJournal(false, options.progress));
      return this.pageFromJournal(options);
    }
  }

  private async pageFromJournal(options: {
    limit: number;
    includeChildren: boolean;
    before?: { created_at: string; receipt_id: string };
    accept?: (entries: JournalEntry[]) => Promise<boolean[]>;
  }): Promise<JournalEntry[]> {
    const { limit, before } = options;
    const listed = new Set<string>();
    const candidates = new Map<string, JournalEntry>();
    const verdicts = new Map<string, boolean>();
    let page: JournalEntry[] = [];
    for (const chunk of readJournalBackwards(this.dir)) {
      for (const entry of chunk) {
        for (const c of entry.children ?? []) listed.add(c);
        if (before !== undefined && !ranksBelow(entry, before)) continue;
        if (!candidates.has(entry.receipt_id)) candidates.set(entry.receipt_id, entry);
      }
      page = await this.pick(candidates, listed, verdicts, options);
      // No unread line is newer than the oldest line of this chunk's running maximum.
      const bound = chunk[chunk.length - 1]?.max_created_at ?? "";
      const last = page[page.length - 1];
      if (page.length >= limit && last !== undefined && last.created_at > bound) break;
    }
    return page;
  }

  /** The best `limit` candidates that are visible and accepted, asking `accept` as needed. */
  private async pick(
    candidates: Map<string, JournalEntry>,
    listed: Set<string>,
    verdicts: Map<string, boolean>,
    options: {
      limit: number;
      includeChildren: boolean;
      accept?: (entries: JournalEntry[]) => Promise<boolean[]>;
    },
  ): Promise<JournalEntry[]> {
    const ranked = [...candidates.values()]
      .filter((e) => options.includeChildren || (e.child !== true && !listed.has(e.receipt_id)))
      .sort(newestFirstOrder);
    const page: JournalEntry[] = [];
    let at = 0;
    while (page.length < options.limit && at < ranked.length) {
      const slice = ranked.slice(at, at + (options.limit - page.length));
      at += slice.length;
      const unknown = slice.filter((e) => !verdicts.has(e.receipt_id));
      if (unknown.length > 0) {
        const answers = options.accept === undefined ? [] : await options.accept(unknown);
        unknown.forEach((e, i) =>
          verdicts.set(e.receipt_id, answers[i] ?? options.accept === undefined),
        );
      }
      for (const e of slice) if (verdicts.get(e.receipt_id) === true) page.push(e);
    }
    return page;
  }
}

/** Told how far a pass over the receipt files (a rebuild, a scan) has got. */
export type RebuildProgress = (done: number, total: number) => void;

function newestFirstOrder(a: JournalEntry, b: JournalEntry): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.receipt_id < b.receipt_id ? 1 : a.receipt_id > b.receipt_id ? -1 : 0;
}

/** True when `entry` comes after `position` in newest-first order. */
function ranksBelow(
  entry: JournalEntry,
  position: { created_at: string; receipt_id: string },
): boolean {
  return (
    entry.created_at < position.created_at ||
    (entry.created_at === position.created_at && entry.receipt_id < position.receipt_id)
  );
}

/** Journal lines as index entries: one per id, sorted by id. */
function toIndexEntries(journal: readonly JournalEntry[]): ReceiptStoreIndexEntry[] {
  const byId = new Map<string, ReceiptStoreIndexEntry>();
  for (const e of journal) {
    byId.set(e.receipt_id, {
      receipt_id: e.receipt_id,
      file_name: e.file_name,
      created_at: e.created_at,
    });
  }
  return [...byId.values()].sort(byReceiptId);
}

function snapshot(entries: ReceiptStoreIndexEntry[]): ReceiptStoreIndex {
  return { schema: RECEIPT_STORE_INDEX_SCHEMA, generated_at: unixNanos(), entries };
}

/** Runs synchronous store work behind the promise API: a throw becomes a rejection. */
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
