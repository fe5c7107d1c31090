/**
 * The single-receipt machine verdict `runx.verify_verdict.v1` (what
 * `runx verify --receipt <path|-> --json` prints). A lone receipt cannot prove its tree,
 * so lineage is always reported `unverified`.
 */
import { RuntimeError } from "../errors.js";
import { receiptBodyDigest, receiptContentId } from "./identity.js";
import type { Receipt } from "./model.js";
import { decodeReceipt } from "./shape.js";
import { isSignatureFinding, verifyReceiptProofWith } from "./verify.js";
import { localPseudoSignatureVerifier } from "./verifier.js";
import type { ReceiptVerifier, SignatureMode } from "./verifier.js";
import { RECEIPT_MAX_NESTING, scanJsonNesting } from "../parser/nesting.js";

/** Verdict schema name. */
export const VERIFY_VERDICT_SCHEMA = "runx.verify_verdict.v1";
/** Largest single-receipt document accepted (10 MiB). */
export const SINGLE_RECEIPT_MAX_BYTES = 10 * 1024 * 1024;

/** Status of one verdict check. */
export type CheckStatus = "valid" | "invalid" | "not_evaluated";

/** A recomputed value compared with the stored one. */
export interface VerdictCheck {
  status: CheckStatus;
  expected: string | null;
  actual: string | null;
}

/** The verdict document, members in printed order. */
export interface VerifyVerdict {
  schema: typeof VERIFY_VERDICT_SCHEMA;
  receipt_id: string | null;
  valid: boolean;
  digest: VerdictCheck;
  content_address: VerdictCheck;
  signature: { mode: SignatureMode; status: CheckStatus; kid: string | null };
  lineage: { status: "unverified"; message: string };
  findings: { code: string; path: string; message: string }[];
}

/** Options of `receiptVerdict`. */
export interface VerdictOptions {
  /** Production key ring; when set the verdict is in production mode. */
  verifier?: ReceiptVerifier;
  /** Accept `sig:` pseudo signatures when no verifier is configured. */
  allowLocalDevelopment?: boolean;
}

const LINEAGE = {
  status: "unverified",
  message: "single receipt verification cannot prove receipt-tree lineage",
} as const;

function recomputed(compute: () => string, actual: string): VerdictCheck {
  try {
    const expected = compute();
    return { status: expected === actual ? "valid" : "invalid", expected, actual };
  } catch {
    return { status: "not_evaluated", expected: null, actual };
  }
}

function parseFailure(message: string, mode: SignatureMode): VerifyVerdict {
  const notEvaluated: VerdictCheck = { status: "not_evaluated", expected: null, actual: null };
  return {
    schema: VERIFY_VERDICT_SCHEMA,
    receipt_id: null,
    valid: false,
    digest: { ...notEvaluated },
    content_address: { ...notEvaluated },
    signature: { mode, status: "not_evaluated", kid: null },
    lineage: { ...LINEAGE },
    findings: [{ code: "receipt_parse_error", path: "$", message }],
  };
}

/** Parses a receipt document strictly; returns the receipt or a parse error message. */
export function parseReceiptDocument(
  input: string | Uint8Array,
): { receipt: Receipt } | { error: string } {
  const text = typeof input === "string" ? input : new TextDecoder("utf-8").decode(input);
  // A file on disk can be anything: bounded (nesting.ts) before the decoder and the
  // canonical writer, both recursive, walk it.
  const deep = scanJsonNesting(text, RECEIPT_MAX_NESTING);
  if (deep !== undefined)
    return {
      error: `receipt nests deeper than ${RECEIPT_MAX_NESTING} levels (line ${deep.line}, column ${deep.column})`,
    };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: error instanceof Error ? error.message : "receipt is not valid JSON" };
  }
  try {
    return { receipt: decodeReceipt(value) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : "receipt shape is invalid" };
  }
}

/** The verdict of one already decoded receipt under `verifier` in `mode`. */
export function verdictOf(
  receipt: Receipt,
  verifier: ReceiptVerifier,
  mode: SignatureMode,
): VerifyVerdict {
  const digest = recomputed(() => receiptBodyDigest(receipt), receipt.digest);
  const contentAddress = recomputed(() => receiptContentId(receipt), receipt.id);
  const findings = verifyReceiptProofWith(receipt, verifier);
  const signatureStatus: CheckStatus = findings.some((finding) => isSignatureFinding(finding.code))
    ? "invalid"
    : "valid";
  return {
    schema: VERIFY_VERDICT_SCHEMA,
    receipt_id: receipt.id,
    valid:
      findings.length === 0 &&
      digest.status === "valid" &&
      contentAddress.status === "valid" &&
      signatureStatus === "valid",
    digest,
    content_address: contentAddress,
    signature: {
      mode,
      status: signatureStatus,
      kid: receipt.issuer.kid === "" ? null : receipt.issuer.kid,
    },
    lineage: { ...LINEAGE },
    findings: findings.map(({ code, path, message }) => ({ code, path, message })),
  };
}

/**
 * Verifies one receipt document. With a verifier the mode is production; otherwise
 * `allowLocalDevelopment` must be set (VERIFIER_CONFIG_INVALID if not), except that an
 * unparseable document always yields a parse-error verdict without needing keys.
 */
export function receiptVerdict(
  input: string | Uint8Array,
  options: VerdictOptions = {},
): VerifyVerdict {
  const size = typeof input === "string" ? Buffer.byteLength(input, "utf8") : input.length;
  if (size > SINGLE_RECEIPT_MAX_BYTES) {
    throw new RuntimeError("USAGE", `--receipt input exceeds ${SINGLE_RECEIPT_MAX_BYTES} bytes`);
  }
  const parsed = parseReceiptDocument(input);
  // Keys are only needed for a well-formed receipt: a parse failure reports local mode.
  if ("error" in parsed) return parseFailure(parsed.error, "local-development");
  if (options.verifier !== undefined) {
    return verdictOf(parsed.receipt, options.verifier, "production");
  }
  if (options.allowLocalDevelopment !== true) {
    throw new RuntimeError(
      "VERIFIER_CONFIG_INVALID",
      "runx verify requires trusted receipt verification keys. Set both RUNX_RECEIPT_VERIFY_KID and RUNX_RECEIPT_VERIFY_ED25519_PUBLIC_KEY_BASE64, or pass --allow-local-development-signatures for local fixture receipts only.",
    );
  }
  return verdictOf(parsed.receipt, localPseudoSignatureVerifier, "local-development");
}

/** The verdict as printed with `--json`: two-space indentation and a final newline. */
export function formatVerdictJson(verdict: VerifyVerdict): string {
  return `${JSON.stringify(verdict, null, 2)}\n`;
}
