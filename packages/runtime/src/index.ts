/** The public API of the runx runtime: explicit named exports only. */
export { createRuntime, RUNTIME_RELEASE } from "./create-runtime.js";
export type { Runtime, RuntimeOptions } from "./create-runtime.js";
export {
  RuntimeError,
  ERROR_CODES,
  EXIT_CODE,
  FAILURE_CATEGORY,
  isRuntimeError,
} from "./errors.js";
export type { ErrorCode, ErrorDetails, ErrorLocation } from "./errors.js";
export type { AllowSpawn, SkillRequest } from "./run/run-skill.js";
export {
  answersTemplate,
  DETAILED_OUTCOMES,
  deriveDetailedOutcome,
  deriveOutcome,
  envelopeExitCode,
  makeEnvelope,
  pendingStatus,
} from "./contracts/envelope.js";
export type {
  DetailedOutcome,
  Disposition,
  RunClosure,
  RunOutcome,
  RunRequest,
  RunStatus as EnvelopeStatus,
  SkillRunEnvelope,
} from "./contracts/envelope.js";
export { parseStrictYaml } from "./parser/strict-yaml.js";
export { parseSkillMarkdown } from "./parser/skill-markdown.js";
export { parseExecutionProfile } from "./parser/execution-profile.js";
export { buildSkillPackage } from "./parser/package.js";
export { selectRunner } from "./parser/select-runner.js";
export { inputsJsonSchema, parseInputFlags, resolveInputs } from "./parser/inputs.js";
export { computePackageDigest, loadSkillPackage, resolveSkillRef } from "./packages/resolve.js";
export { readInputsDocument } from "./packages/inputs-document.js";
export {
  buildSkillReceipt,
  canonicalJson,
  hashCanonical,
  receiptBodyDigest,
  receiptContentId,
  receiptVerdict,
  ReceiptStore,
  sealReceipt,
  signerFromEnv,
  verifierFromEnv,
  verifyTree,
} from "./receipts/index.js";
export type {
  Receipt,
  ReceiptReport,
  ReceiptSigner,
  ReceiptVerifier,
  ReportCheck,
  VerifyVerdict,
} from "./receipts/index.js";
export { createTaintSet } from "./redaction.js";
export { openStateStore } from "./store/open.js";
export type { StateStore, RunRecord, StepRecord } from "./store/types.js";
export type { StoreVerification } from "./services/verify.js";
export type { HistoryListing, HistoryDetail } from "./services/history.js";
export type {
  AdapterListing,
  AttemptReceiptCheck,
  DispatchAttemptView,
  DispatchState,
  RunningDispatch,
} from "./services/adapters.js";
export type { DispatchLogView } from "./services/dispatch-logs.js";
export type {
  ConsoleServices,
  ApiTokenView,
  ApprovalServices,
  DagEdge,
  DagNode,
  DagPage,
  DecideResult,
  DecisionView,
  EvidenceBundle,
  GatePolicy,
  Operator,
  OperatorListing,
  PendingApproval,
  PendingRequestView,
  RunDetail,
  RunListItem,
  RunListPage,
  RunSummary,
  RunTimeline,
  TimelineEvent,
  TimelineEventKind,
  TimelineRequest,
  TimelineStep,
  TimelineStepStatus,
  ConsoleInputName,
  ConsoleInputs,
  HostJob,
  RecoveryOutcome,
} from "./console/index.js";
export { consoleInput, roleAtLeast } from "./console/index.js";
export { fieldProblem, fieldWords, firstProblem } from "./parser/field-problem.js";
export type { FieldProblem } from "./parser/field-problem.js";
export { INTERRUPTED_REQUEST } from "./console/index.js";
export type { OperatorRole } from "./store/console-store.js";
export type { AnswerContract } from "./run/answer-contract.js";
export type { RunEntryPoint, RunOrigin } from "./run/origin.js";
export type { SkillListItem } from "./services/list-skills.js";
export type {
  InstallResult,
  LocalRegistry,
  PackageProjection,
  PublishResult,
  SearchItem,
  SearchResult,
} from "./registry/local.js";
export type {
  CatalogInput,
  CatalogRunner,
  CatalogServices,
  CatalogSkill,
} from "./services/catalog.js";
export type { DataOperationResult } from "./data/model.js";
/** Process containment: a host kills the run cgroups a dead (or its own stopping) process left. */
export { reapRunCgroups } from "./process/containment.js";
