/**
 * Receipt-tree verification (spec B.5, B.6). A parent commits each child by
 * `{type: receipt, uri: runx:receipt:<id>, locator: <child digest>}`. The tree verifies
 * when the root and every supplied receipt verify under the policy, every child ref
 * resolves to exactly one supplied receipt carrying that digest, there are no cycles,
 * depth and breadth stay within limits, and nothing supplied is unreachable.
 * Structurally identical repeated receipts collapse into one node; two different bodies
 * under one id are ambiguous.
 */
import { RuntimeError } from "../errors.js";
import { canonicalJson } from "./canonical.js";
import { referencedReceiptId } from "./identity.js";
import type { Lineage, Receipt, Reference } from "./model.js";
import { verifyReceiptProof } from "./verify.js";
import type { ReceiptFinding } from "./verify.js";
import type { SignaturePolicy } from "./verifier.js";

/** Traversal limits. */
export interface TreeConfig {
  maxDepth: number;
  maxBreadth: number;
  /** Require children to point back with `lineage.parent` (off by default: children are reusable). */
  requireParentLinks: boolean;
}

/** Default limits: depth 64, breadth 1024, no parent links required. */
export const DEFAULT_TREE_CONFIG: Readonly<TreeConfig> = Object.freeze({
  maxDepth: 64,
  maxBreadth: 1024,
  requireParentLinks: false,
});

/** Options of the tree checks. */
export interface TreeOptions {
  policy: SignaturePolicy;
  config?: Partial<TreeConfig>;
}

/** Outcome of verifying one root with its supplied descendants. */
export interface TreeVerification {
  valid: boolean;
  findings: ReceiptFinding[];
}

/**
 * What the tree checks read of a receipt: a whole `Receipt`, or the slim record a
 * verification worker sends back (store-verify.ts) with `body_key` standing for its body.
 */
export interface TreeNode {
  readonly id: string;
  readonly digest: string;
  readonly lineage?: Lineage | undefined;
  readonly signature: { readonly value: string };
  /** Equal for structurally identical receipts (a digest of the file's bytes, say). */
  readonly body_key?: string;
}

/** The per-receipt proof findings of a node (verifyReceiptProof for whole receipts). */
export type NodeProof<R extends TreeNode> = (node: R) => readonly ReceiptFinding[];

interface Supplied<R extends TreeNode> {
  readonly path: string;
  readonly receipt: R;
}

function bodyKey(receipt: TreeNode): string | undefined {
  if (receipt.body_key !== undefined) return receipt.body_key;
  try {
    return canonicalJson(receipt);
  } catch {
    return undefined;
  }
}

/**
 * Drops receipts structurally identical to an earlier one (or to `also`). Identical bodies
 * share an id, so only receipts whose id repeats are compared by body: canonicalising every
 * receipt of a large store cost more than verifying it.
 */
function dedupe<R extends TreeNode>(receipts: readonly R[], also?: R): R[] {
  const count = new Map<string, number>();
  for (const receipt of also === undefined ? receipts : [also, ...receipts]) {
    count.set(receipt.id, (count.get(receipt.id) ?? 0) + 1);
  }
  const seen = new Set<string>();
  const key = (receipt: R): string | undefined =>
    (count.get(receipt.id) ?? 0) > 1 ? bodyKey(receipt) : undefined;
  const first = also === undefined ? undefined : key(also);
  if (first !== undefined) seen.add(first);
  const out: R[] = [];
  for (const receipt of receipts) {
    const k = key(receipt);
    if (k !== undefined && seen.has(k)) continue;
    if (k !== undefined) seen.add(k);
    out.push(receipt);
  }
  return out;
}

function join(path: string, segment: string): string {
  return path === "" ? segment : `${path}.${segment}`;
}

function prefixed(path: string, findings: readonly ReceiptFinding[]): ReceiptFinding[] {
  return findings.map((finding) => ({ ...finding, path: join(path, finding.path) }));
}

class Traversal<R extends TreeNode> {
  readonly visiting = new Set<string>();
  readonly reached = new Set<string>();
  constructor(
    private readonly positions: ReadonlyMap<string, readonly Supplied<R>[]>,
    private readonly config: TreeConfig,
  ) {}

  subtree(path: string, receipt: R, depth: number): ReceiptFinding[] {
    if (this.visiting.has(receipt.id)) {
      return [
        {
          code: "child_receipt_cycle",
          path: join(path, "id"),
          message: "child receipt refs must not form cycles",
        },
      ];
    }
    this.visiting.add(receipt.id);
    const findings: ReceiptFinding[] = [];
    const children = receipt.lineage?.children ?? [];
    if (children.length > this.config.maxBreadth) {
      findings.push({
        code: "child_receipt_breadth_limit",
        path: join(path, "lineage.children"),
        message: "receipt refs exceed configured breadth limit",
      });
    }
    children.slice(0, this.config.maxBreadth).forEach((reference, index) => {
      const edgePath = join(path, `lineage.children[${index}]`);
      findings.push(...this.edge(edgePath, receipt, reference, depth));
    });
    this.visiting.delete(receipt.id);
    return findings;
  }

  private edge(path: string, parent: R, reference: Reference, depth: number): ReceiptFinding[] {
    const malformed: ReceiptFinding = {
      code: "child_receipt_ref_malformed",
      path,
      message: "child receipt ref must be a typed runx receipt URI",
    };
    if (reference.type !== "receipt") return [malformed];
    if (depth + 1 > this.config.maxDepth) {
      return [
        {
          code: "child_receipt_depth_limit",
          path,
          message: "child receipt refs exceed configured depth limit",
        },
      ];
    }
    const id = referencedReceiptId(reference);
    if (id === undefined) return [malformed];
    const candidates = this.positions.get(id) ?? [];
    const [found] = candidates;
    if (found === undefined) {
      return [
        {
          code: "child_receipt_missing",
          path,
          message: "child receipt ref must resolve to a supplied child receipt",
        },
      ];
    }
    if (candidates.length > 1) {
      return [
        {
          code: "child_receipt_ambiguous",
          path,
          message: "child receipt ref resolved to multiple supplied receipts",
        },
      ];
    }
    const child = found.receipt;
    if (this.visiting.has(child.id)) {
      return [
        {
          code: "child_receipt_cycle",
          path,
          message: "child receipt refs must not point to an ancestor",
        },
      ];
    }
    const findings: ReceiptFinding[] = [];
    if (reference.locator !== child.digest) {
      findings.push({
        code: "child_receipt_digest_mismatch",
        path: `${found.path}.locator`,
        message:
          "strict tree proof requires child receipt refs to carry the exact child receipt digest",
      });
    }
    const parentRef = child.lineage?.parent;
    if (parentRef !== undefined && parentRef.uri !== `runx:receipt:${parent.id}`) {
      findings.push({
        code: "child_receipt_parent_mismatch",
        path: `${path}.lineage.parent`,
        message: "child lineage parent ref must match the parent receipt",
      });
    } else if (parentRef === undefined && this.config.requireParentLinks) {
      findings.push({
        code: "child_receipt_parent_mismatch",
        path: `${path}.lineage.parent`,
        message: "strict tree verification requires child lineage parent refs",
      });
    }
    if (this.reached.has(child.id)) return findings;
    findings.push(...this.subtree(found.path, child, depth + 1));
    this.reached.add(child.id);
    return findings;
  }
}

/**
 * Verifies `root` with `supplied` as the candidate descendants. Finding paths of supplied
 * receipts start with `receipt[<id>]` (a second body under one id gets `#2`, ...).
 */
export function verifyReceiptTree(
  root: Receipt,
  supplied: readonly Receipt[],
  options: TreeOptions,
): TreeVerification {
  return verifyNodeTree(root, supplied, options, (r) => verifyReceiptProof(r, options.policy));
}

function verifyNodeTree<R extends TreeNode>(
  root: R,
  supplied: readonly R[],
  options: TreeOptions,
  proof: NodeProof<R>,
): TreeVerification {
  const config: TreeConfig = { ...DEFAULT_TREE_CONFIG, ...options.config };
  const members: Supplied<R>[] = [];
  const positions = new Map<string, Supplied<R>[]>();
  for (const receipt of dedupe(supplied, root)) {
    const list = positions.get(receipt.id) ?? [];
    const path = `receipt[${receipt.id}]${list.length === 0 ? "" : `#${list.length + 1}`}`;
    const member = { path, receipt };
    list.push(member);
    positions.set(receipt.id, list);
    members.push(member);
  }
  const findings: ReceiptFinding[] = [...proof(root)];
  for (const list of positions.values()) {
    for (const duplicate of list.slice(1)) {
      findings.push({
        code: "duplicate_child_receipt",
        path: `${duplicate.path}.id`,
        message: "child receipt ids must be unique",
      });
    }
  }
  for (const member of members) {
    findings.push(...prefixed(member.path, proof(member.receipt)));
  }
  const traversal = new Traversal(positions, config);
  findings.push(...traversal.subtree("", root, 0));
  for (const member of members) {
    if (!traversal.reached.has(member.receipt.id)) {
      findings.push({
        code: "orphan_child_receipt",
        path: `${member.path}.id`,
        message: "supplied child receipts must be reachable from the root receipt",
      });
    }
  }
  return { valid: findings.length === 0, findings };
}

/** One tree of a receipt set, as `runx verify --receipt-dir` reports it. */
export interface TreeReport {
  root_receipt_id: string;
  receipt_count: number;
  /** The root's `lineage.parent` receipt id when that receipt is not in the set. */
  parent_missing: string | null;
  valid: boolean;
  findings: ReceiptFinding[];
}

function childIds(receipt: TreeNode): string[] {
  return (receipt.lineage?.children ?? []).flatMap((reference) => {
    const id = referencedReceiptId(reference);
    return id === undefined ? [] : [id];
  });
}

function parentId(receipt: TreeNode): string | undefined {
  const parent = receipt.lineage?.parent;
  return parent === undefined ? undefined : referencedReceiptId(parent);
}

/**
 * Splits a receipt set into trees and verifies each. Roots are receipts no other member
 * lists as a child and whose `lineage.parent` is not in the set; a tree's members are
 * the receipts reachable through children plus those whose parent links lead to it.
 * With `rootId`, only the tree containing that receipt (RECEIPT_NOT_FOUND otherwise).
 */
export function verifyTree(
  receipts: readonly Receipt[],
  options: TreeOptions & { rootId?: string },
): TreeReport[] {
  return verifyNodeTrees(receipts, options, (r) => verifyReceiptProof(r, options.policy));
}

/**
 * {@link verifyTree} over tree nodes whose per-receipt proof findings `proof` supplies (a
 * verification worker computed them, or a cache says these exact bytes had none).
 */
export function verifyNodeTrees<R extends TreeNode>(
  receipts: readonly R[],
  options: TreeOptions & { rootId?: string },
  proof: NodeProof<R>,
): TreeReport[] {
  const all = dedupe(receipts);
  const byId = new Map<string, R[]>();
  for (const receipt of all) byId.set(receipt.id, [...(byId.get(receipt.id) ?? []), receipt]);
  const listedAsChild = new Set<string>();
  for (const receipt of all) {
    for (const id of childIds(receipt)) if (id !== receipt.id) listedAsChild.add(id);
  }
  const reach = (start: R): Set<R> => {
    const seen = new Set<R>([start]);
    const queue = [start];
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      for (const id of childIds(next)) {
        for (const child of byId.get(id) ?? []) {
          if (!seen.has(child)) {
            seen.add(child);
            queue.push(child);
          }
        }
      }
    }
    return seen;
  };
  const isRoot = (receipt: R): boolean => {
    const parent = parentId(receipt);
    return !listedAsChild.has(receipt.id) && (parent === undefined || !byId.has(parent));
  };
  const roots = all.filter(isRoot).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const trees = roots.map((root) => ({ root, members: reach(root) }));
  const covered = new Set(trees.flatMap((tree) => [...tree.members]));
  // Receipts only reachable through a cycle get a tree anchored at their smallest id.
  for (const receipt of [...all].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    if (covered.has(receipt)) continue;
    const members = reach(receipt);
    members.forEach((member) => covered.add(member));
    trees.push({ root: receipt, members });
  }
  // Which trees hold each receipt, kept up to date below: asking every tree about every
  // receipt made large stores quadratic.
  const treesOf = new Map<R, Set<number>>();
  trees.forEach((tree, t) => {
    for (const member of tree.members) {
      let holders = treesOf.get(member);
      if (holders === undefined) treesOf.set(member, (holders = new Set()));
      holders.add(t);
    }
  });
  for (const receipt of all) {
    // Parent links pull a receipt into the tree its parent chain reaches.
    let current: R | undefined = receipt;
    const chain = new Set<R>();
    while (current !== undefined && !chain.has(current)) {
      chain.add(current);
      const parent = parentId(current);
      current = parent === undefined ? undefined : byId.get(parent)?.[0];
    }
    const reached = new Set<number>();
    for (const link of chain) for (const t of treesOf.get(link) ?? []) reached.add(t);
    for (const t of reached) {
      (trees[t] as (typeof trees)[number]).members.add(receipt);
      let holders = treesOf.get(receipt);
      if (holders === undefined) treesOf.set(receipt, (holders = new Set()));
      holders.add(t);
    }
  }
  let selected = trees;
  if (options.rootId !== undefined) {
    const wanted = options.rootId;
    selected = trees.filter((tree) => [...tree.members].some((member) => member.id === wanted));
    if (selected.length === 0) {
      throw new RuntimeError("RECEIPT_NOT_FOUND", "receipt was not found in the receipt set", {
        receipt_id: wanted,
      });
    }
    selected = selected.slice(0, 1);
  }
  return selected.map(({ root, members }) => {
    const parent = parentId(root);
    const parentMissing = parent !== undefined && !byId.has(parent) ? parent : null;
    const supplied = [...members].filter((member) => member !== root);
    const verification = verifyNodeTree(root, supplied, options, proof);
    return {
      root_receipt_id: root.id,
      receipt_count: members.size,
      parent_missing: parentMissing,
      valid: verification.valid && parentMissing === null,
      findings: verification.findings,
    };
  });
}
