/** The graph engine: documents, references, fanout sync, preparation rules and the run machine. */
export { graphFromRunner, normalizeGraph, stepById } from "./document.js";
export type {
  ConflictGate,
  FanoutGroup,
  FanoutStrategy,
  FieldCondition,
  GraphDoc,
  GraphGuard,
  GraphStep,
  NormalizeGraphOptions,
  RunStep,
  SkillStep,
  StepContract,
  StepRef,
  ThresholdGate,
  ToolStep,
} from "./document.js";
export {
  evaluateCondition,
  parseStepRef,
  resolveIdempotencyKey,
  resolvePath,
  resolveStepInputs,
} from "./references.js";
export type { ReferenceScope } from "./references.js";
export {
  evaluateFanoutSync,
  fanoutDecisionKey,
  fanoutGateId,
  requiredSuccesses,
} from "./fanout.js";
export type { BranchResult, FanoutDecision, FanoutGate, FanoutSyncRecord } from "./fanout.js";
export {
  admitRetryPolicy,
  assertRetryAdmissible,
  bindStepContracts,
  contractFromRunner,
  declaredOutputKeys,
  effectiveRetry,
  retryRefusals,
  sharesResultKey,
  validateResultProducers,
} from "./plan.js";
export type { EffectiveRetry, RetryAdmission, StepContractResolver } from "./plan.js";
export { approvalDecisionPacket, isApprovalStep } from "./actions.js";
export { applyStepOutcome, createGraphState, nextActions, resumeGraph } from "./machine.js";
export type {
  ApprovalDecisionInput,
  ApprovalRecord,
  ExecuteStepAction,
  FailAction,
  GraphAction,
  GraphFailureCode,
  GraphState,
  GraphStatus,
  GraphStepState,
  RetryMetadata,
  StepAttempt,
  StepOutcome,
  StepOutcomeStatus,
  StepStatus,
} from "./machine.js";
