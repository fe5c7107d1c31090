/**
 * The console's input contracts: one precompiled JSON Schema per operation
 * (schemas/console/*.schema.json). `consoleInput` returns the value typed, or raises
 * INPUT_INVALID naming the offending field once, in plain words (../parser/field-problem.ts),
 * never its value.
 */
import type { ValidateFunction } from "ajv";
import { RuntimeError } from "../errors.js";
import { firstProblem } from "../parser/field-problem.js";
import type { SchemaNode } from "../parser/field-problem.js";
import { findDeepNesting, MAX_NESTING_DEPTH, nestingTooDeep } from "../parser/nesting.js";
import { validateConsoleApprovalsDecide } from "../generated/validate-console-approvals-decide.js";
import { validateConsoleApprovalsSetPolicy } from "../generated/validate-console-approvals-set-policy.js";
import { validateConsoleAuthBootstrap } from "../generated/validate-console-auth-bootstrap.js";
import { validateConsoleAuthCreateToken } from "../generated/validate-console-auth-create-token.js";
import { validateConsoleAuthListTokens } from "../generated/validate-console-auth-list-tokens.js";
import { validateConsoleAuthLogin } from "../generated/validate-console-auth-login.js";
import { validateConsoleAuthRevokeToken } from "../generated/validate-console-auth-revoke-token.js";
import { validateConsoleOperatorAdd } from "../generated/validate-console-operator-add.js";
import { validateConsoleOperatorSetDisabled } from "../generated/validate-console-operator-set-disabled.js";
import { validateConsoleOperatorSetRole } from "../generated/validate-console-operator-set-role.js";
import { validateConsoleReceiptPage } from "../generated/validate-console-receipt-page.js";
import { validateConsoleReceiptRef } from "../generated/validate-console-receipt-ref.js";
import { validateConsoleRunRef } from "../generated/validate-console-run-ref.js";
import { validateConsoleRunsAnswer } from "../generated/validate-console-runs-answer.js";
import { validateConsoleRunsList } from "../generated/validate-console-runs-list.js";
import { validateConsoleRunsStart } from "../generated/validate-console-runs-start.js";
import { validateConsoleSkillsSearch } from "../generated/validate-console-skills-search.js";
import { validateConsoleSkillRef } from "../generated/validate-console-skill-ref.js";
import { validateConsoleDataTail } from "../generated/validate-console-data-tail.js";
import type { DetailedOutcome } from "../contracts/envelope.js";
import type { OperatorRole } from "../store/console-store.js";
import type { RunStatus } from "../store/types.js";

/** The typed value of each console input contract. */
export interface ConsoleInputs {
  "auth-login": { username: string; password: string };
  "auth-bootstrap": { token: string; username: string; password: string };
  "auth-create-token": { name: string };
  "auth-list-tokens": { username?: string };
  "auth-revoke-token": { tokenId: string };
  "operator-add": { username: string; role: OperatorRole; password: string };
  "operator-set-disabled": { username: string; disabled: boolean };
  "operator-set-role": { username: string; role: OperatorRole };
  "runs-list": {
    limit?: number;
    cursor?: string | null;
    status?: RunStatus;
    outcome?: DetailedOutcome;
    skill?: string;
    skillSearch?: string;
    from?: string;
    to?: string;
    waitingForApproval?: boolean;
    waitingForMe?: boolean;
  };
  "run-ref": { runId: string };
  "receipt-page": { runId: string; cursor?: string; limit?: number };
  "runs-start": {
    skill: string;
    runner?: string;
    inputs: Record<string, unknown>;
    allowSpawn?: boolean;
  };
  "runs-answer": { runId: string; answers: Record<string, unknown>; note?: string };
  "approvals-decide": {
    runId: string;
    gateId: string;
    decision: "approve" | "deny";
    reason: string;
  };
  "approvals-set-policy": {
    skill: string;
    gateId: string;
    requiredApprovals: number;
    forbidInitiator: boolean;
  };
  "receipt-ref": { receiptId: string };
  "skills-search": { query?: string; limit?: number };
  "skill-ref": { skill: string };
  "data-tail": { source: string; resource: string; aggregateId: string; limit?: number };
}

/** A console input contract name. */
export type ConsoleInputName = keyof ConsoleInputs;

const VALIDATORS: Record<ConsoleInputName, ValidateFunction> = {
  "auth-login": validateConsoleAuthLogin,
  "auth-bootstrap": validateConsoleAuthBootstrap,
  "auth-create-token": validateConsoleAuthCreateToken,
  "auth-list-tokens": validateConsoleAuthListTokens,
  "auth-revoke-token": validateConsoleAuthRevokeToken,
  "operator-add": validateConsoleOperatorAdd,
  "operator-set-disabled": validateConsoleOperatorSetDisabled,
  "operator-set-role": validateConsoleOperatorSetRole,
  "runs-list": validateConsoleRunsList,
  "run-ref": validateConsoleRunRef,
  "runs-start": validateConsoleRunsStart,
  "runs-answer": validateConsoleRunsAnswer,
  "approvals-decide": validateConsoleApprovalsDecide,
  "approvals-set-policy": validateConsoleApprovalsSetPolicy,
  "receipt-ref": validateConsoleReceiptRef,
  "receipt-page": validateConsoleReceiptPage,
  "skills-search": validateConsoleSkillsSearch,
  "skill-ref": validateConsoleSkillRef,
  "data-tail": validateConsoleDataTail,
};

/** Checks `value` against the named contract; INPUT_INVALID names the first bad field. */
export function consoleInput<N extends ConsoleInputName>(
  name: N,
  value: unknown,
): ConsoleInputs[N] {
  // The generated validators recurse into JSON values (run inputs, answers): nesting is
  // bounded first. The request object is one level above the documents it carries.
  const deep = findDeepNesting(value, MAX_NESTING_DEPTH + 1);
  if (deep !== undefined) throw nestingTooDeep({ path: deep, contract: `console/${name}` });
  const validate = VALIDATORS[name];
  if (validate(value ?? {})) return (value ?? {}) as ConsoleInputs[N];
  // The generated console validators carry their schema (scripts/gen-validators.mjs).
  const problem = firstProblem(validate.errors, validate.schema as SchemaNode | undefined);
  throw new RuntimeError("INPUT_INVALID", problem?.message ?? "the input is not valid", {
    path: problem === undefined || problem.path === "" ? "$" : problem.path,
    named: true,
    contract: `console/${name}`,
  });
}
