/** Receipts: canonical JSON, the receipt model, sealing, signing, verification and the store. */
export {
  canonicalJson,
  compareCodePoints,
  hashCanonical,
  isSha256Digest,
  RECEIPT_CANONICALIZATION,
  sha256Prefixed,
  STABLE_JSON_CANONICALIZATION,
} from "./canonical.js";
export type * from "./model.js";
export { RECEIPT_SCHEMA } from "./model.js";
export { decodeJsonObject, decodeReceipt, serializeReceipt } from "./shape.js";
export {
  childReceiptReference,
  receiptBodyDigest,
  receiptContentId,
  receiptFullDigest,
  referencedReceiptId,
} from "./identity.js";
export type {
  Ed25519ReceiptSigner,
  Ed25519SignerOptions,
  EnvRecord,
  ReceiptSigner,
} from "./signer.js";
export {
  ed25519Signer,
  LOCAL_DEVELOPMENT_ISSUER,
  localDevelopmentSigner,
  RECEIPT_KEY_ENV,
  signerFromEnv,
  stripReceiptSigningEnv,
  verifierFromEnv,
} from "./signer.js";
export type {
  ReceiptVerifier,
  SignatureFailure,
  SignatureMode,
  SignaturePolicy,
  VerificationKey,
} from "./verifier.js";
export {
  ed25519Verifier,
  localDevelopmentPolicy,
  localPseudoSignatureVerifier,
  productionPolicy,
} from "./verifier.js";
export { decodeBase64Flexible, ed25519FromSeed, generateEd25519Seed } from "./ed25519.js";
export type { SealOptions, UnsealedReceipt } from "./seal.js";
export { sealReceipt } from "./seal.js";
export type {
  GraphReceiptFacts,
  LineageExtras,
  RefusalFailure,
  RefusalReceiptFacts,
  SkillReceiptFacts,
} from "./build.js";
export {
  buildGraphReceipt,
  buildRefusalReceipt,
  buildSkillReceipt,
  DEFAULT_ENFORCEMENT_PROFILE_HASH,
  stepIdentityDigest,
} from "./build.js";
export type { FindingCode, ReceiptFinding, ReceiptStatus } from "./verify.js";
export {
  isContentAddressed,
  receiptStatus,
  verifyReceiptProof,
  verifyReceiptStructure,
} from "./verify.js";
export type {
  ReceiptReport,
  ReportCheck,
  ReportCheckName,
  ReportCommits,
  ReportDigest,
  ReportLink,
  ReportSigner,
} from "./report.js";
export { RECEIPT_REPORT_SCHEMA, receiptReport } from "./report.js";
export type { VerdictOptions, VerifyVerdict } from "./verdict.js";
export {
  formatVerdictJson,
  parseReceiptDocument,
  receiptVerdict,
  SINGLE_RECEIPT_MAX_BYTES,
} from "./verdict.js";
export type {
  NodeProof,
  TreeConfig,
  TreeNode,
  TreeOptions,
  TreeReport,
  TreeVerification,
} from "./tree.js";
export { DEFAULT_TREE_CONFIG, verifyNodeTrees, verifyReceiptTree, verifyTree } from "./tree.js";
export type {
  JournalEntry,
  RebuildProgress,
  ReceiptStoreIndex,
  ReceiptStoreIndexEntry,
  ReceiptStoreOptions,
  WriteOutcome,
  StoredFile,
} from "./store.js";
export { RECEIPT_STORE_INDEX_SCHEMA, ReceiptStore } from "./store.js";
export { receiptStoreLabel } from "./store-files.js";
export type { ListedCache, ListedReceipt, ListedVerification } from "./listed.js";
export { checkListedReceipt, listedVerification } from "./listed.js";
export { LISTING_CACHE_MAX, ListingCache } from "./verified-cache.js";
