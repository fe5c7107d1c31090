/**
 * The append-only receipt store: one `sha256-<hex>.json` file per receipt (compact JSON in
 * struct order) plus `index.json`, a recoverable projection. Every receipt is checked
 * (content address and proof under the store's policy) before it is written and when it
 * is read. Mutations hold `.receipt-store.lock`. Messages name the store by a safe label,
 * never by its path.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";
import { ensureStateDir } from "../workspace.js";
import type { Receipt } from "./model.js";
import { RECEIPT_SCHEMA } from "./model.js";
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
import {
  byReceiptId,
  indexEntry,
  mergeIndexEntries,
  mergeIndexText,
  parseStoreIndex,
  RECEIPT_STORE_INDEX_SCHEMA,
  sameEntries,
} from "./store-index.js";
import type { ReceiptStoreIndex, ReceiptStoreIndexEntry } from "./store-index.js";
import { isContentAddressed, verifyReceiptProof } from "./verify.js";
import type { SignaturePolicy } from "./verifier.js";
import { RECEIPT_MAX_NESTING, scanJsonNesting } from "../parser/nesting.js";

export { RECEIPT_STORE_INDEX_SCHEMA } from "./store-index.js";
export type { ReceiptStoreIndex, ReceiptStoreIndexEntry } from "./store-index.js";

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

interface StoredFile {
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
      this.updateIndex(
        [...pending.values()].map(({ receipt }, i) =>
          indexEntry(receipt, outcomes[i]?.file_name ?? receiptFileName(receipt.id)),
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
  private files(): StoredFile[] {
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
    // Bounded before the decoder and the verifier (both recursive) walk a file from disk.
    if (scanJsonNesting(text, RECEIPT_MAX_NESTING) !== undefined)
      throw this.invalid(`receipt nests deeper than ${RECEIPT_MAX_NESTING} levels`, {
        receipt_id: file.id,
      });
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw this.invalid("receipt JSON is malformed", { receipt_id: file.id });
    }
    const schema = (value as { schema?: unknown } | null)?.schema;
    if (schema !== RECEIPT_SCHEMA) {
      throw this.invalid("receipt has unsupported schema", { receipt_id: file.id });
    }
    let receipt: Receipt;
    try {
      receipt = decodeReceipt(value);
    } catch (error) {
      const path = error instanceof RuntimeError ? error.details.path : undefined;
      throw this.invalid("receipt shape is invalid", { receipt_id: file.id, path });
    }
    if (receipt.id !== file.id) {
      throw this.invalid("receipt id does not match file name", { receipt_id: file.id });
    }
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
  scan(): Promise<{
    receipts: Receipt[];
    unreadable: Array<{ file_name: string; message: string }>;
  }> {
    return settle(() => this.scanSync());
  }

  private scanSync(): {
    receipts: Receipt[];
    unreadable: Array<{ file_name: string; message: string }>;
  } {
    const receipts: Receipt[] = [];
    const unreadable: Array<{ file_name: string; message: string }> = [];
    for (const file of this.files()) {
      try {
        receipts.push(this.parseFile(file, this.readText(file.name), false));
      } catch (error) {
        const message = error instanceof RuntimeError ? error.message : "unreadable";
        unreadable.push({ file_name: file.name, message });
      }
    }
    return { receipts, unreadable };
  }

  private entriesFromFiles(verifyProof: boolean): ReceiptStoreIndexEntry[] {
    const entries: ReceiptStoreIndexEntry[] = [];
    for (const file of this.files()) {
      const receipt = this.parseFile(file, this.readText(file.name), verifyProof);
      entries.push(indexEntry(receipt, file.name));
    }
    return entries.sort(byReceiptId);
  }

  private writeIndex(entries: ReceiptStoreIndexEntry[]): ReceiptStoreIndex {
    const index: ReceiptStoreIndex = {
      schema: RECEIPT_STORE_INDEX_SCHEMA,
      generated_at: unixNanos(),
      entries,
    };
    this.writeIndexText(JSON.stringify(index));
    return index;
  }

  private writeIndexText(text: string): void {
    try {
      // A recoverable projection: atomic, but not fsynced.
      writeFileAtomic(this.dir, STORE_INDEX_FILE, text, false);
    } catch (error) {
      throw storeIoError(this.label, "index write", error);
    }
  }

  /** index.json's text, undefined when missing. */
  private readIndexText(): string | undefined {
    try {
      return readFileSync(join(this.dir, STORE_INDEX_FILE), "utf8");
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return undefined;
      throw storeIoError(this.label, "index read", error);
    }
  }

  /** Reads index.json: undefined when missing, RECEIPT_INDEX_MALFORMED when unreadable as an index. */
  private readIndex(): ReceiptStoreIndex | undefined {
    const text = this.readIndexText();
    return text === undefined ? undefined : parseStoreIndex(text, this.label);
  }

  /**
   * Merges new entries into the index; an index that cannot be merged (missing, malformed,
   * unsorted, naming a wrong file) is rebuilt from the files. As in upstream's store, a write
   * does not list the directory: files added or removed out of band are found by `loadIndex`
   * (RECEIPT_INDEX_STALE) and repaired by `rebuildIndex`. (Listing cost every write ~3 ms at
   * 5,000 receipts.)
   */
  private updateIndex(additions: readonly ReceiptStoreIndexEntry[]): void {
    try {
      const text = this.readIndexText();
      // The common case: the index as this store wrote it, merged on its text.
      const spliced = text === undefined ? undefined : mergeIndexText(text, additions, unixNanos());
      if (spliced !== undefined) {
        if (spliced.changed) this.writeIndexText(spliced.text);
        return;
      }
      const index = text === undefined ? undefined : parseStoreIndex(text, this.label);
      const merged = index === undefined ? undefined : mergeIndexEntries(index, additions);
      if (merged === undefined) throw new Error("index cannot be merged");
      if (merged.changed) this.writeIndex(merged.entries);
    } catch {
      try {
        this.writeIndex(this.entriesFromFiles(false));
      } catch {
        throw new RuntimeError(
          "RECEIPT_INDEX_STALE",
          `receipt store index is stale in store ${this.label}`,
          { store: this.label },
        );
      }
    }
  }

  /**
   * Loads index.json, checked against the receipt files: a missing index is rebuilt, a
   * mismatch is RECEIPT_INDEX_STALE, an unreadable one RECEIPT_INDEX_MALFORMED.
   */
  async loadIndex(): Promise<ReceiptStoreIndex> {
    return this.withLock(() => {
      const index = this.readIndex();
      const entries = this.entriesFromFiles(true);
      if (index === undefined) return this.writeIndex(entries);
      if (!sameEntries(entries, index.entries)) {
        throw new RuntimeError(
          "RECEIPT_INDEX_STALE",
          `receipt store index is stale in store ${this.label}: index entries do not match receipt JSON files`,
          { store: this.label },
        );
      }
      return index;
    });
  }

  /** Rebuilds index.json from the (verified) receipt files. */
  async rebuildIndex(): Promise<ReceiptStoreIndex> {
    return this.withLock(() => this.writeIndex(this.entriesFromFiles(true)));
  }
}

/** Runs synchronous store work behind the promise API: a throw becomes a rejection. */
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}
