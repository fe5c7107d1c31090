/**
 * Local admission of a skill's source before anything runs: allowed source types, a timeout
 * inside (0, max], the strict inline-code policy for cli-tool sources, and a live
 * connected-auth grant when the skill asks for one. Collects every reason. Pure.
 */
import type { JsonValue } from "../parser/json.js";
import {
  ConnectedAuthInvalid,
  connectedAuthRequirement,
  findMatchingGrant,
} from "./connected-auth.js";
import type { ConnectedGrant, PolicyDecision } from "./connected-auth.js";
import { detectInlineCode } from "./inline-code.js";
import type { InlineCodeFinding } from "./inline-code.js";

/** The parts of a skill admission looks at. */
export interface LocalAdmissionSkill {
  name: string;
  source: { type: string; command?: string; args?: readonly string[]; timeoutSeconds?: number };
  auth?: JsonValue;
}

/** Admission knobs; absent ones take the local defaults. */
export interface LocalAdmissionOptions {
  allowedSourceTypes?: readonly string[];
  maxTimeoutSeconds?: number;
  connectedGrants?: readonly ConnectedGrant[];
  connectedAuthCheckedAt?: string;
  skipConnectedAuth?: boolean;
  strictCliToolInlineCode?: boolean;
  /** The inline-code detector the strict policy applies (the runtime's own by default). */
  detectInlineCode?: (command: string, args: readonly string[]) => InlineCodeFinding | null;
}

/** Source types a local run admits by default. */
export const DEFAULT_LOCAL_SOURCE_TYPES: readonly string[] = [
  "agent",
  "agent-task",
  "approval",
  "cli-tool",
  "javascript",
  "mcp",
  "a2a",
  "catalog",
  "graph",
  // runx-ts: the adapter runner has its own deny-by-default gate (src/adapters/dispatch.ts).
  "adapter",
];

/** Default cap on a source's `timeout_seconds`. */
export const DEFAULT_MAX_TIMEOUT_SECONDS = 300;

/** The denial reason for a cli-tool source that evaluates inline code, or undefined. */
export function inlineCodeDenial(
  command: string | undefined,
  args: readonly string[] = [],
  detect: (command: string, args: readonly string[]) => InlineCodeFinding | null = detectInlineCode,
): string | undefined {
  if (command === undefined || command === "") return undefined;
  const finding = detect(command, args);
  if (finding === null) return undefined;
  return `cli-tool source '${finding.interpreter}' uses inline code via '${finding.flag}', which is rejected by strict workspace policy; move the program into a checked-in script and invoke that file instead`;
}

/** Admits or denies a skill for local execution, with every reason that applies. */
export function admitLocalSkill(
  skill: LocalAdmissionSkill,
  options: LocalAdmissionOptions = {},
): PolicyDecision {
  const reasons: string[] = [];
  const { source } = skill;
  const allowed = options.allowedSourceTypes ?? DEFAULT_LOCAL_SOURCE_TYPES;
  if (!allowed.includes(source.type))
    reasons.push(`source type '${source.type}' is not allowed for local execution`);
  const max = options.maxTimeoutSeconds ?? DEFAULT_MAX_TIMEOUT_SECONDS;
  if (source.timeoutSeconds !== undefined) {
    if (source.timeoutSeconds <= 0)
      reasons.push("source timeout must be greater than zero seconds");
    if (source.timeoutSeconds > max)
      reasons.push(`source timeout exceeds local maximum of ${max} seconds`);
  }
  if (source.type === "cli-tool" && options.strictCliToolInlineCode === true) {
    const denial = inlineCodeDenial(source.command, source.args, options.detectInlineCode);
    if (denial !== undefined) reasons.push(denial);
  }
  if (options.skipConnectedAuth !== true) {
    try {
      const requirement = connectedAuthRequirement(skill.auth);
      if (
        requirement !== undefined &&
        findMatchingGrant(requirement, options.connectedGrants ?? [], {
          ...(options.connectedAuthCheckedAt !== undefined
            ? { checkedAt: options.connectedAuthCheckedAt }
            : {}),
        }) === undefined
      )
        reasons.push(`connected auth grant required for provider '${requirement.provider}'`);
    } catch (error) {
      if (!(error instanceof ConnectedAuthInvalid)) throw error;
      reasons.push(error.message);
    }
  }
  return reasons.length > 0
    ? { status: "deny", reasons }
    : { status: "allow", reasons: ["local admission allowed"] };
}
