/**
 * `runx verify` over a receipt store: the whole store, or the trees touching a time range.
 * The pipeline: select files (all, or the journal's lines in the range plus whatever their
 * lineage links reach) → check each file on every core (receipts/verify-pool.ts), streamed
 * to `onFile` in order → tree checks over the slim nodes → report. Files the verified-digest
 * cache (receipts/verified-cache.ts) vouches for skip the per-receipt proof, never the tree
 * checks; the cache is rewritten with the digests this pass found clean.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";
import { ReceiptStore, referencedReceiptId, verifyNodeTrees } from "../receipts/index.js";
import type { SignaturePolicy, StoredFile } from "../receipts/index.js";
import { receiptFileNames } from "../receipts/store-files.js";
import type { CheckedNode, FileCheck } from "../receipts/stored-receipt.js";
import {
  loadVerifiedCache,
  saveVerifiedCache,
  verifiedCacheFile,
} from "../receipts/verified-cache.js";
import { checkReceiptFiles } from "../receipts/verify-pool.js";
import type { ReceiptFinding } from "../receipts/verify.js";
import { withStatus } from "./verify.js";
import type { StoreVerification } from "./verify.js";

/** A `created_at` window in Unix milliseconds, both ends inclusive. */
export interface CreatedRange {
  since?: number;
  until?: number;
}

/** Options of {@link verifyReceiptStore}. */
export interface StoreVerifyOptions {
  dir: string;
  label: string;
  policy: SignaturePolicy;
  rootId?: string;
  /** Only the trees holding a receipt created in this window. */
  range?: CreatedRange;
  /** The workspace's `.runx` (where the verified-digest cache lives); no cache without it. */
  runxDir?: string;
  /** Told after each receipt file checked. */
  progress?: (done: number, total: number) => void;
  /** Told about each file as soon as it and every file before it are checked. */
  onFile?: (check: FileCheck) => void;
  /** Worker threads besides this one (default: one per other core; 0: none). */
  workers?: number;
}

type Checked = Extract<FileCheck, { node: CheckedNode }>;

// Compared as instants: as text, `…59Z` sorts after `…59.5Z`.
function inRange(createdAt: string, range: CreatedRange): boolean {
  const at = Date.parse(createdAt);
  return (
    (range.since === undefined || at >= range.since) &&
    (range.until === undefined || at <= range.until)
  );
}

function linkedIds(node: CheckedNode): string[] {
  const lineage = node.lineage;
  const refs = [...(lineage?.children ?? [])];
  if (lineage?.parent !== undefined) refs.push(lineage.parent);
  if (lineage?.previous !== undefined) refs.push(lineage.previous);
  return refs.flatMap((ref) => {
    const id = referencedReceiptId(ref);
    return id === undefined ? [] : [id];
  });
}

/** The stored file of `id` (any accepted spelling), or undefined. */
function fileOf(dir: string, id: string): StoredFile | undefined {
  let names: string[];
  try {
    names = receiptFileNames(id);
  } catch {
    return undefined;
  }
  const name = names.find((candidate) => existsSync(join(dir, candidate)));
  return name === undefined ? undefined : { id, name };
}

/**
 * The files a range selects: the journal's lines created in the window, then, round by
 * round, the receipts their links reach (lineage children, parent and previous, and the
 * parents the journal names: a child is sealed before its parent and does not name it), so
 * every tree touching the window is verified whole. Without a journal every file is read
 * and the window applied to what they say.
 */
async function checkRange(
  store: ReceiptStore,
  range: CreatedRange,
  check: (files: StoredFile[]) => Promise<FileCheck[]>,
): Promise<FileCheck[]> {
  const journal = store.readJournal();
  if (journal === undefined) {
    const all = await check(store.files());
    const picked = all.filter((c) => "node" in c && inRange(c.node.created_at, range));
    return rangeClosure(store, picked, new Map(), check);
  }
  const parents = new Map<string, string[]>();
  const seen = new Set<string>();
  const first: StoredFile[] = [];
  for (const entry of journal) {
    for (const child of entry.children ?? []) {
      parents.set(child, [...(parents.get(child) ?? []), entry.receipt_id]);
    }
    if (!inRange(entry.created_at, range) || seen.has(entry.receipt_id)) continue;
    seen.add(entry.receipt_id);
    first.push({ id: entry.receipt_id, name: entry.file_name });
  }
  return rangeClosure(store, await check(first), parents, check);
}

async function rangeClosure(
  store: ReceiptStore,
  start: FileCheck[],
  parents: ReadonlyMap<string, readonly string[]>,
  check: (files: StoredFile[]) => Promise<FileCheck[]>,
): Promise<FileCheck[]> {
  const all = [...start];
  const seen = new Set(start.flatMap((c) => ("node" in c ? [c.node.id] : [])));
  for (let round = start; round.length > 0;) {
    const next: StoredFile[] = [];
    for (const c of round) {
      if (!("node" in c)) continue;
      for (const id of [...linkedIds(c.node), ...(parents.get(c.node.id) ?? [])]) {
        if (seen.has(id)) continue;
        seen.add(id);
        const file = fileOf(store.dir, id);
        if (file !== undefined) next.push(file);
      }
    }
    round = next.length === 0 ? [] : await check(next);
    all.push(...round);
  }
  return all;
}

/** Verifies every tree in a receipt store, or those `rootId` or `range` select. */
export async function verifyReceiptStore(opts: StoreVerifyOptions): Promise<StoreVerification> {
  const store = new ReceiptStore({ dir: opts.dir, policy: opts.policy, label: opts.label });
  const cacheFile =
    opts.runxDir === undefined ? undefined : verifiedCacheFile(opts.runxDir, opts.dir, opts.policy);
  const verified = cacheFile === undefined ? new Set<string>() : loadVerifiedCache(cacheFile);
  let done = 0;
  const check = (files: StoredFile[]): Promise<FileCheck[]> =>
    checkReceiptFiles({
      dir: opts.dir,
      label: opts.label,
      policy: opts.policy,
      verified,
      files,
      ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
      onCheck: (c, _n, total) => {
        done++;
        opts.progress?.(done, Math.max(total, done));
        opts.onFile?.(c);
      },
    });
  const checks =
    opts.range === undefined
      ? await check(store.files())
      : await checkRange(store, opts.range, check);
  const nodes: Checked[] = [];
  const unreadable: StoreVerification["unreadable_files"] = [];
  for (const c of checks) {
    if ("node" in c) nodes.push(c);
    else unreadable.push({ file_name: c.file_name, message: c.unreadable });
  }
  const proofOf = new Map<CheckedNode, readonly ReceiptFinding[]>(
    nodes.map((c) => [c.node, c.findings]),
  );
  const receipts = nodes.map((c) => c.node);
  const reports = verifyNodeTrees(
    receipts,
    { policy: opts.policy, ...(opts.rootId !== undefined ? { rootId: opts.rootId } : {}) },
    (node) => proofOf.get(node) ?? [],
  );
  if (cacheFile !== undefined && opts.runxDir !== undefined && opts.range === undefined) {
    // Only a whole-store pass rewrites the cache (a range would forget the rest).
    const clean = nodes.filter((c) => c.findings.length === 0).map((c) => c.node.body_key);
    saveVerifiedCache(opts.runxDir, cacheFile, clean);
  }
  const trees = withStatus(reports, receipts, opts.policy);
  return {
    receipt_dir: opts.label,
    signature_mode: opts.policy.mode,
    receipt_count: new Set(receipts.map((r) => r.id)).size,
    trees,
    unreadable_files: unreadable,
    valid: unreadable.length === 0 && trees.every((t) => t.valid),
  };
}

const BOUND = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?Z)?$/;

/**
 * A `--since`/`--until` value (a UTC date or RFC 3339 UTC instant) as Unix milliseconds; a
 * date alone means the day's first instant for `since` and its last for `until`. USAGE
 * naming the flag otherwise.
 */
export function parseRangeBound(flag: "--since" | "--until", value: string): number {
  const at = BOUND.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new RuntimeError(
      "USAGE",
      `${flag} must be a UTC date or instant like 2026-01-02 or 2026-01-02T03:04:05Z`,
      { flag },
    );
  }
  return flag === "--until" && !value.includes("T") ? at + 86_400_000 - 1 : at;
}
