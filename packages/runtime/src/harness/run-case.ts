/**
 * Runs one harness case in a disposable workspace under
 * `<workspace>/.runx/harness/<random>/` with its own receipt store and state, the harness
 * receipt profile, and `caller.answers`/`caller.approvals` as the only answers to pauses. The
 * scratch workspace holds a copy of the package and of every local package it reaches, at the
 * same relative positions, plus its declared `harness.files`. Receipts are proof-verified before any assertion and copied into
 * the durable store; the scratch directory is removed whatever happens.
 */
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, relative } from "node:path";
import { createRuntime } from "../create-runtime.js";
import { FAILURE_CATEGORY, isRuntimeError, RuntimeError } from "../errors.js";
import {
  localDevelopmentPolicy,
  ReceiptStore,
  referencedReceiptId,
  verifierFromEnv,
  verifyTree,
} from "../receipts/index.js";
import type { Receipt, SignaturePolicy } from "../receipts/index.js";
import type { ToolLanes } from "../run/context.js";
import { createFixtureHttpTransport, fixtureResolver } from "../tools/http/fixture-http.js";
import type { FixtureHttpTransport } from "../tools/http/fixture-http.js";
import { createProviderLaneDrivers } from "../tools/provider/provider-lane.js";
import { readSeedReceipts } from "./seed.js";
import { packageToolRoots } from "../tool-catalogs/local-tools.js";
import type { RunRequest, SkillRunEnvelope } from "../contracts/envelope.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { assertCase, formatMismatch } from "./assert.js";
import { copySources, sourceClosure } from "./closure.js";
import type { Mismatch, ObservedCase } from "./assert.js";
import type { HarnessCaseSpec, HarnessStatus } from "./fixture.js";
import type { CaseResult } from "./report.js";

/** The pinned clock of harness runs and receipts (upstream's oracles were recorded with it). */
export const HARNESS_CREATED_AT = "2026-05-18T00:00:00Z";
/** Approves whichever provider-effect gate is pending (its id depends on the plan digest). */
export const ANY_PROVIDER_EFFECT = "provider-effect:*";
const MAX_ROUNDS = 32;
const SCRUBBED_ENV = [
  /^RUNX_PROVIDER_PERMISSION_/,
  /^RUNX_PUBLIC_API_/,
  /^RUNX_AGENT_API_KEY$/,
  /^RUNX_HOSTED_CREDENTIAL_HANDLES_JSON$/,
  /^RUNX_RECEIPT_DIR$/,
  /^RUNX_CWD$/,
];

/** Where and how to run a case. */
export interface CaseContext {
  /** The project workspace (holds `.runx/harness`). */
  workspaceRoot: string;
  /** The durable receipt store the case's receipts are copied into. */
  durableReceiptDir: string;
  env: Readonly<Record<string, string | undefined>>;
  signal: AbortSignal;
  /** Told about every finished case (a progress line on a terminal). */
  onCase?: (result: CaseResult) => void;
}

export type { CaseResult } from "./report.js";

/** Which answer a pending request takes, or undefined when the caller supplied none. */
function answerFor(
  request: RunRequest,
  spec: HarnessCaseSpec,
): { key: string; value: JsonValue } | undefined {
  if (request.kind === "approval") {
    if (Object.hasOwn(spec.approvals, request.id)) {
      return { key: request.id, value: spec.approvals[request.id] ?? false };
    }
    const wildcard = spec.approvals[ANY_PROVIDER_EFFECT];
    if (request.id.startsWith("provider-effect:") && wildcard !== undefined) {
      return { key: ANY_PROVIDER_EFFECT, value: wildcard };
    }
    return undefined;
  }
  const value = spec.answers[request.id];
  return value === undefined ? undefined : { key: request.id, value };
}

function statusOf(
  receipt: Receipt | undefined,
  envelope: SkillRunEnvelope | undefined,
): HarnessStatus {
  const disposition = receipt?.seal.disposition ?? envelope?.closure?.disposition;
  if (disposition === "closed") return "sealed";
  if (disposition === "deferred") return "needs_agent";
  if (disposition === "blocked") return "policy_denied";
  if (disposition === undefined && envelope !== undefined && envelope.status !== "failure") {
    return envelope.status === "sealed" ? "sealed" : "needs_agent";
  }
  return "failure";
}

/**
 * The output the expectation sees: the run's result. A raw-text result (`{stdout}` only, the
 * stdout was not a JSON object) is shown together with the case inputs, so fixtures of
 * echo-style skills can name the echoed field (upstream's echo-skill fixture relies on it).
 */
function observedOutput(result: Record<string, unknown> | null, inputs: JsonObject): JsonValue {
  if (result === null) return null;
  const keys = Object.keys(result);
  if (keys.length === 1 && typeof result.stdout === "string") {
    return { ...inputs, ...(result as JsonObject) };
  }
  return result as JsonObject;
}

/** What a case runs: the package (or standalone graph document) and its harness files. */
export interface CaseTarget {
  /** The package directory or graph document, as an absolute path. */
  ref: string;
  packageDir: string;
  /** `harness.files`: package-relative files materialized into the scratch workspace. */
  files: readonly string[];
  /**
   * The receipt name: the case name, except for a standalone graph document, whose receipts
   * are named after the graph (upstream pins `hrn_<graph name>_graph`).
   */
  receiptName?: string;
}

/**
 * Fills the scratch workspace: the target and every local package it reaches (see
 * closure.ts), then the declared `harness.files` at the workspace root when the package
 * itself is not there. Returns the reference to run inside the scratch workspace.
 */
async function prepareScratch(
  scratch: string,
  target: CaseTarget,
  projectRoot: string,
): Promise<string> {
  const inProject = !relative(projectRoot, target.ref).startsWith("..");
  const bound = inProject ? projectRoot : dirname(target.packageDir);
  const ref = copySources(await sourceClosure(target.ref, bound), scratch);
  const copiedPackage = target.ref === target.packageDir ? ref : dirname(ref);
  for (const file of target.files) {
    const parts = file.split("/");
    if (file === "" || isAbsolute(file) || parts.some((p) => p === "" || p === "." || p === "..")) {
      throw new RuntimeError(
        "HARNESS_INVALID",
        `harness.files: ${JSON.stringify(file)} is not a normalized package-relative path`,
      );
    }
    const source = join(target.packageDir, file);
    if (!existsSync(source)) {
      throw new RuntimeError("HARNESS_INVALID", `harness.files: ${file} does not exist`);
    }
    if (copiedPackage === scratch) continue;
    mkdirSync(dirname(join(scratch, file)), { recursive: true });
    cpSync(source, join(scratch, file), { recursive: true });
  }
  return ref;
}

/**
 * A target-less `agent_task` fixture runs a one-runner package synthesised in the scratch
 * workspace: an agent task named by the fixture's runner, answered only from `caller.answers`.
 */
function writeAgentTaskPackage(scratch: string, task: string): void {
  mkdirSync(scratch, { recursive: true });
  const name = JSON.stringify(task);
  writeFileSync(
    join(scratch, "SKILL.md"),
    `---\nname: ${name}\ndescription: Harness agent task ${name}.\n---\nComplete the task.\n`,
  );
  writeFileSync(
    join(scratch, "X.yaml"),
    `skill: ${name}\nrunners:\n  ${name}:\n    default: true\n    type: agent-task\n    agent: harness\n    task: ${name}\n`,
  );
}

/** Removes the scratch workspace, and `.runx/harness` itself once no case is using it. */
function removeScratch(scratch: string): void {
  rmSync(scratch, { recursive: true, force: true });
  try {
    rmdirSync(dirname(scratch));
  } catch {
    // another case (or process) still has a scratch workspace there
  }
}

function scrubbedEnv(
  env: Readonly<Record<string, string | undefined>>,
  extra: Record<string, string>,
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(env)) {
    if (!SCRUBBED_ENV.some((pattern) => pattern.test(key))) out[key] = value;
  }
  return { ...out, ...extra };
}

/** Runs the case against a copy of `packageDir`; never throws for a case-level failure. */
export async function runCase(
  spec: HarnessCaseSpec,
  /** What to run; undefined for a target-less `agent_task` fixture. */
  target: CaseTarget | undefined,
  label: string,
  ctx: CaseContext,
): Promise<CaseResult> {
  const result: CaseResult = { name: spec.name, label, errors: [], graph: spec.kind === "graph" };
  const fail = (text: string): CaseResult => {
    result.errors.push(`${label}: ${text}`);
    return result;
  };
  if (spec.unsupported.length > 0) {
    return fail(`${spec.unsupported.join(", ")}: not supported yet (the case is not run)`);
  }
  const caseEnv = scrubbedEnv(ctx.env, spec.env);
  // The case runs a copy of the package, but its local tools are found beside the original,
  // where its author put them (tool-catalogs/local-tools.ts `skillDir`).
  if (target !== undefined) {
    const roots = [caseEnv.RUNX_TOOL_ROOTS, ...packageToolRoots(target.packageDir)];
    const joined = roots.filter((r) => r !== undefined && r !== "").join(delimiter);
    if (joined !== "") caseEnv.RUNX_TOOL_ROOTS = joined;
  }
  // The fixture's signature policy: local development, plus real signatures under the
  // verifier keys the case environment names. Seeds and the case's receipts verify under it.
  let policy: SignaturePolicy;
  try {
    policy = localDevelopmentPolicy(verifierFromEnv(caseEnv));
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    return fail(`env: ${error.code}: ${error.message}`);
  }
  // The harness never reaches the network: HTTP is answered only by the fixture's lanes
  // (none declared = every request unmatched). Provider tools see only the fixture's
  // provider_responses when it declares them (otherwise the local fixture provider).
  const http: FixtureHttpTransport = createFixtureHttpTransport(
    spec.http ?? { responses: new Map(), exchanges: [] },
  );
  const toolLanes: ToolLanes = {
    http: { transport: http, resolver: fixtureResolver },
    ...(spec.providers !== undefined
      ? { providers: createProviderLaneDrivers(spec.providers) }
      : {}),
  };
  const scratch = join(ctx.workspaceRoot, ".runx", "harness", randomBytes(8).toString("hex"));
  const runtime = createRuntime({
    workspaceRoot: scratch,
    runxHome: join(scratch, ".runx", "home"),
    env: caseEnv,
    receiptProfile: {
      kind: "harness",
      name: target?.receiptName ?? spec.name,
      createdAt: HARNESS_CREATED_AT,
    },
    // Cases replay on the pinned clock, so time-dependent admission (an authority's expiry or
    // not_before) decides the same way on every replay, as the fixture's author recorded it.
    now: () => new Date(HARNESS_CREATED_AT),
    toolLanes,
  });
  try {
    let ref = scratch;
    if (target !== undefined) ref = await prepareScratch(scratch, target, ctx.workspaceRoot);
    else writeAgentTaskPackage(scratch, spec.runner ?? spec.name);
    const seeded = new Set<string>();
    if (spec.seedReceipts.length > 0) {
      if (target === undefined) return fail("setup.receipts: needs a target package");
      const seeds = await readSeedReceipts(target.packageDir, spec.seedReceipts, policy);
      if ("error" in seeds) return fail(seeds.error);
      await new ReceiptStore({ dir: runtime.paths.receiptDir, policy }).writeAll(seeds.receipts);
      for (const receipt of seeds.receipts) seeded.add(receipt.id);
    }
    const consumed = new Set<string>();
    let envelope: SkillRunEnvelope | undefined;
    let refusal: string | undefined;
    let refusalReceiptId: string | undefined;
    let missingInput = false;
    try {
      envelope = await runtime.runSkill(
        {
          ref,
          ...(spec.runner !== undefined ? { runner: spec.runner } : {}),
          inputs: Object.fromEntries(
            Object.entries(spec.inputs).map(([key, value]) => [key, { value }]),
          ),
          secretEnv: [],
          origin: { via: "harness" },
        },
        { signal: ctx.signal },
      );
      for (let round = 0; round < MAX_ROUNDS; round += 1) {
        if (envelope.status !== "needs_agent" && envelope.status !== "needs_approval") break;
        const picked = envelope.requests.map((request) => ({
          request,
          answer: answerFor(request, spec),
        }));
        const missing = picked.filter((p) => p.answer === undefined);
        // An unanswered required input is a failed case; an unanswered agent act or approval
        // leaves it needs_agent (how "needs resolution" fixtures are written).
        missingInput = missing.some((p) => p.request.kind === "input");
        if (picked.length === 0 || missing.length > 0) break;
        const answers: Record<string, JsonValue> = {};
        const approvals: Record<string, JsonValue> = {};
        for (const { request, answer } of picked) {
          if (answer === undefined) continue;
          consumed.add(answer.key);
          if (request.kind === "approval") approvals[request.id] = answer.value;
          else answers[request.id] = answer.value;
        }
        envelope = await runtime.resumeWith(
          { runId: envelope.run_id, document: { answers, approvals }, origin: { via: "harness" } },
          { signal: ctx.signal },
        );
      }
    } catch (error) {
      if (!isRuntimeError(error)) throw error;
      refusal = `${error.code}: ${error.message}`;
      // A refusal after the package resolved sealed a receipt of its own (a graph refused
      // before any step ran, a denied policy); the case is judged on that receipt.
      if (typeof error.details.receipt_id === "string") refusalReceiptId = error.details.receipt_id;
      // A refusal in the operator-context category (policy, network, retry admission) is a
      // policy denial; any other refusal is a failure.
      result.status =
        FAILURE_CATEGORY[error.code] === "operator_context_blocked" ? "policy_denied" : "failure";
    }

    const scratchStore = new ReceiptStore({ dir: runtime.paths.receiptDir, policy });
    let all: Receipt[] = [];
    if (existsSync(runtime.paths.receiptDir)) {
      try {
        all = await scratchStore.list();
      } catch (error) {
        const code = isRuntimeError(error) ? error.code : "INTERNAL";
        return fail(`receipt proof invalid: ${code}: ${String((error as Error).message)}`);
      }
    }
    for (const report of verifyTree(all, { policy })) {
      if (!report.valid) {
        const first = report.findings[0];
        return fail(
          `receipt proof invalid (${report.root_receipt_id}): ${first?.code ?? "unknown"} at ${first?.path ?? "?"}`,
        );
      }
    }
    const byId = new Map(all.map((r) => [r.id, r]));
    const receiptId = envelope?.receipt_id ?? refusalReceiptId;
    const receipt = receiptId !== undefined && receiptId !== null ? byId.get(receiptId) : undefined;
    const children = (receipt?.lineage?.children ?? []).flatMap((ref) => {
      const child = byId.get(referencedReceiptId(ref) ?? "");
      return child === undefined ? [] : [child];
    });
    if (receipt !== undefined) result.receipt = receipt;
    if (envelope !== undefined) {
      result.status = missingInput ? "failure" : statusOf(receipt, envelope);
      if (missingInput) refusal ??= "a required input was not supplied";
      // A run that sealed without closing says why in its seal (e.g. which step failed).
      const seal = receipt?.seal;
      if (seal !== undefined && seal.disposition !== "closed" && seal.summary !== "") {
        refusal ??= seal.summary;
      }
    }
    let stepOutputs: Record<string, unknown> | undefined;
    if (spec.expect.stepOutputs !== undefined && envelope !== undefined) {
      const detail = await runtime.historyDetail(envelope.run_id);
      stepOutputs = Object.fromEntries(
        detail.steps.map((step) => [
          step.stepId,
          step.outputJson === null
            ? null
            : ((JSON.parse(step.outputJson) as { output?: unknown }).output ?? null),
        ]),
      );
    }
    const observed: ObservedCase = {
      ...(stepOutputs !== undefined ? { stepOutputs } : {}),
      status: result.status ?? "failure",
      output: observedOutput(envelope?.result ?? null, spec.inputs),
      ...(receipt !== undefined ? { receipt } : {}),
      children,
    };
    const mismatches: Mismatch[] = assertCase(observed, spec.expect);
    for (const id of Object.keys(spec.answers)) {
      if (!consumed.has(id)) {
        mismatches.push({
          path: `caller.answers.${id}.replayed`,
          expected: "consumed",
          actual: "not consumed",
        });
      }
    }
    // A run that sealed without closing says why in its seal summary.
    const why =
      refusal ??
      (receipt !== undefined && receipt.seal.disposition !== "closed"
        ? receipt.seal.summary
        : undefined);
    for (const m of mismatches) {
      const note = why !== undefined && m.path === "expect.status" ? ` (${why})` : "";
      fail(`${formatMismatch(m)}${note}`);
    }
    for (const request of http.unmatched) {
      if (request.access !== "mutate") continue;
      fail(
        `caller.http_exchanges: no exchange matches the mutation ${request.method} ${request.url} (it failed without reaching the network)`,
      );
    }
    // Seeded receipts are evidence the case was given, not receipts it produced.
    const produced = all.filter((receipt) => !seeded.has(receipt.id));
    if (produced.length > 0) {
      await new ReceiptStore({ dir: ctx.durableReceiptDir, policy }).writeAll(produced);
    }
    return result;
  } catch (error) {
    return fail(`harness error: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    runtime.close();
    removeScratch(scratch);
  }
}
