/** The `runx.receipt_report.v1` document and the inputs of `receiptReport` (report.ts). */
import type { Receipt } from "./model.js";
import type { ReceiptStatus } from "./verify.js";
import type { SignatureMode, SignaturePolicy } from "./verifier.js";

/** The report schema name. */
export const RECEIPT_REPORT_SCHEMA = "runx.receipt_report.v1";

/** Check names, in the order a report lists them. */
export type ReportCheckName =
  | "readable"
  | "content_address"
  | "body_digest"
  | "signature"
  | "structure"
  | "parent"
  | "children"
  | "previous";

/** One named check: `ok` is null when the check does not apply or could not run. */
export interface ReportCheck {
  name: ReportCheckName;
  /** What the check establishes, e.g. "signature matches". */
  label: string;
  ok: boolean | null;
  /** The result in plain words. */
  message: string;
  /** The finding codes behind a failure (stable, for machines). */
  codes: string[];
}

/** Who sealed the receipt, and how it was signed. */
export interface ReportSigner {
  issuer_type: string;
  kid: string;
  public_key_sha256: string;
  algorithm: string;
  /** `ed25519` for a real signature, `local-development` for the `sig:` pseudo signature. */
  signature_kind: "ed25519" | "local-development";
  /** The policy the check ran under. */
  policy_mode: SignatureMode;
}

/** A digest the receipt carries, and whether its signature covers it. */
export interface ReportDigest {
  value: string;
  signed: boolean;
  /** How the value is bound, in plain words. */
  how: string;
}

/** A linked receipt: present in the store, and whether it matches the committed digest. */
export interface ReportLink {
  id: string;
  /** The step name (children) or subject name, when the linked receipt is present. */
  name: string | null;
  present: boolean;
  /** The committed digest equals the linked receipt's body digest (null: nothing to compare). */
  digest_matches: boolean | null;
  disposition: string | null;
}

/** What the receipt commits. */
export interface ReportCommits {
  subject: { kind: string; uri: string; identity: string | null };
  package_digest: ReportDigest | null;
  execution_closure_digest: ReportDigest | null;
  inputs: Array<{ scope: string; value: string }>;
  outputs: Array<{ scope: string; value: string }>;
  /** The signed idempotency content hash (what the run or step ran on or produced). */
  content_hash: string;
  parents: ReportLink[];
  previous: ReportLink | null;
  children: ReportLink[];
}

/** `runx.receipt_report.v1`. */
export interface ReceiptReport {
  schema: typeof RECEIPT_REPORT_SCHEMA;
  receipt_id: string;
  /** The run the state store files this receipt under, when it knows one. */
  run_id: string | null;
  status: ReceiptStatus;
  /** The first check that failed, null when none did. */
  failed_check: ReportCheck | null;
  checks: ReportCheck[];
  signer: ReportSigner | null;
  commits: ReportCommits | null;
  seal: { disposition: string; reason_code: string; summary: string; closed_at: string } | null;
  created_at: string | null;
  checked_at: string;
}

/** The inputs of {@link receiptReport}. */
export interface ReportInput {
  /** The id the receipt was asked for (its file's name). */
  id: string;
  /** The decoded receipt, or why the file could not be read. */
  document: { receipt: Receipt } | { error: string };
  policy: SignaturePolicy;
  /** Linked receipts by id; an id mapped to undefined is not in the store. */
  linked: ReadonlyMap<string, Receipt | undefined>;
  /** Ids of the receipts that list this one as a child. */
  parentIds: readonly string[];
  runId?: string | null;
  now: Date;
}
