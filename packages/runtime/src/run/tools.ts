/**
 * How a run calls native tools: the runtime's catalog, a per-invocation `ToolContext` built
 * from the run (never from ambient state), input validation against the tool's contract, and
 * deny-by-default scope admission.
 */
import { delimiter, join } from "node:path";
import { requirementOf } from "../credentials/resolve.js";
import { RuntimeError } from "../errors.js";
import { POLICY_APPROVAL_TOOLS } from "../graph/policy-approval.js";
import { verifiedReceiptLookup } from "../receipts/lookup.js";
import { builtinTools, createToolCatalog } from "../tools/catalog.js";
import type { ToolCatalog } from "../tools/catalog.js";
import { createFileEffectLedger } from "../tools/effect-ledger.js";
import { createFixtureProvider } from "../tools/provider/fixture-provider.js";
import { createOutboxProvider } from "../tools/provider/outbox-provider.js";
import { httpTools } from "../tools/http/http-tools.js";
import { createHttpTransport } from "../tools/http/http-transport.js";
import { providerTools } from "../tools/provider/provider.js";
import { storeHistory } from "../tools/receipt/history.js";
import type { ApprovalDecision, JsonRecord, ToolContext, ToolResult } from "../tools/types.js";
import {
  loadLocalTool,
  localManifestFor,
  parseToolRoots,
  type LocalToolRoots,
} from "../tool-catalogs/local-tools.js";
import type { NativeTool } from "../tools/types.js";
import type { RunScope } from "./context.js";
import { extraStateRoots } from "./state-roots.js";

/**
 * The runtime's tool catalog: the native tools, and, given the workspace and RUNX_TOOL_ROOTS,
 * the local process tools (tool-catalogs/local-tools.ts), looked up as `runx tool inspect`
 * resolves them (the tool roots, then the workspace's `tools/`). A local manifest at a native
 * tool's name is refused rather than run in its place. `list` and `inspect` stay native
 * (local tools have their own inspect contract).
 */
export function runtimeToolCatalog(local?: LocalToolRoots): ToolCatalog {
  const native = createToolCatalog([...builtinTools(), ...httpTools(), ...providerTools()]);
  if (local === undefined) return native;
  const loaded = new Map<string, NativeTool | undefined>();
  return {
    list: () => native.list(),
    inspect: (name) => native.inspect(name),
    get(name) {
      const builtin = native.get(name);
      if (builtin !== undefined) {
        // A workspace file must not silently replace a native tool a step or agent was
        // granted; the two would also disagree with what `runx tool list` shows.
        const shadow = localManifestFor(name, local);
        if (shadow !== undefined) {
          throw new RuntimeError(
            "TOOL_MANIFEST_INVALID",
            `${shadow}: name ${name} is a native tool; a local tool may not shadow it`,
            { manifest: shadow, field: "name", tool: name },
          );
        }
        return builtin;
      }
      if (!loaded.has(name)) loaded.set(name, loadLocalTool(name, local));
      return loaded.get(name);
    },
  };
}

/**
 * The local tool roots of a run: its workspace, the invoking RUNX_TOOL_ROOTS and the running
 * package's own (tool-catalogs/local-tools.ts `skillDir`).
 */
export function runToolRoots(
  scope: Pick<RunScope, "deps"> & { prep?: Pick<RunScope["prep"], "pkg"> },
): LocalToolRoots {
  return {
    workspaceRoot: scope.deps.paths.root,
    toolRoots: parseToolRoots(scope.deps.env.RUNX_TOOL_ROOTS, delimiter),
    ...(scope.prep !== undefined ? { skillDir: scope.prep.pkg.packageDir } : {}),
  };
}

/** Per-call facts a tool invocation needs beyond the run. */
export interface ToolCallOptions {
  stepId: string;
  /** Scopes granted to this call (the runner's grant intersected with the step's). */
  scopes: readonly string[];
  approvals?: ReadonlyMap<string, ApprovalDecision>;
  allowPrivateNetwork?: boolean;
  /**
   * The graph verified policy approval evidence for this call (graph/policy-approval.ts);
   * without it a tool that needs policy approval is refused.
   */
  policyApproved?: boolean;
}

/**
 * What the run delivered for the HTTP tools' `auth`: its secrets (already tainted) and the
 * host of the resolved credential's declared audience.
 */
function deliveredCredentials(scope: RunScope): ToolContext["credentials"] {
  if (Object.keys(scope.secrets).length === 0) return undefined;
  const audienceHosts: string[] = [];
  const resolved = scope.credential;
  if (resolved !== undefined) {
    const { audience } = requirementOf(
      scope.prep.pkg.profile?.credentials ?? {},
      resolved.requirement,
    );
    if (audience !== undefined) audienceHosts.push(new URL(audience).hostname.toLowerCase());
  }
  return { secrets: scope.secrets, audienceHosts };
}

/** Builds the context of one tool call from the run. */
export function toolContextFor(scope: RunScope, options: ToolCallOptions): ToolContext {
  const { deps, prep } = scope;
  const allowPrivateNetwork = options.allowPrivateNetwork === true;
  const lanes = deps.toolLanes;
  const credentials = deliveredCredentials(scope);
  return {
    workspaceRoot: deps.paths.root,
    packageDir: prep.pkg.packageDir,
    runId: prep.runId,
    stepId: options.stepId,
    signal: scope.signal,
    scopes: options.scopes,
    baseEnv: deps.env,
    allowPrivateNetwork,
    http: lanes?.http?.transport ?? createHttpTransport({ allowPrivateNetwork }),
    ...(lanes?.http !== undefined ? { resolver: lanes.http.resolver } : {}),
    providers:
      lanes?.providers ??
      new Map([
        [
          "fixture",
          createFixtureProvider({
            name: "fixture",
            stateFile: join(deps.paths.runxDir, "providers", "fixture.json"),
          }),
        ],
        ["outbox", createOutboxProvider({ workspaceRoot: deps.paths.root })],
      ]),
    effects: createFileEffectLedger(join(deps.paths.receiptDir, "provider-effects.json")),
    runDir: join(deps.paths.runxDir, "runs", prep.runId),
    stateRoots: extraStateRoots(deps),
    approvals: options.approvals ?? new Map(),
    taint: scope.taint,
    ...(credentials !== undefined ? { credentials } : {}),
    receipts: verifiedReceiptLookup(() => deps.receipts()),
    history: storeHistory(
      () => deps.receipts(),
      () => deps.runState(),
      deps.paths.runxDir,
    ),
    now: () => deps.now(),
    policy: { strictInlineCode: deps.config().policy.strictCliToolInlineCode },
    ...(deps.config().payees !== undefined ? { payees: deps.config().payees } : {}),
  };
}

/**
 * Calls a native tool: unknown tools, scopes the call was not granted and inputs that break
 * the tool's contract are refused before the tool runs.
 */
export async function invokeTool(
  scope: RunScope,
  catalog: ToolCatalog,
  name: string,
  input: unknown,
  options: ToolCallOptions,
): Promise<ToolResult> {
  const tool = catalog.get(name);
  if (tool === undefined) {
    throw new RuntimeError(
      "TOOL_NOT_FOUND",
      `tool ${name} does not exist (see runx tool search and runx tool list)`,
      {
        tool: name,
      },
    );
  }
  const missing = tool.scopes.filter((s) => !options.scopes.includes(s));
  if (missing.length > 0 && tool.admitsOwnScopes !== true) {
    throw new RuntimeError(
      "POLICY_DENIED",
      `step ${options.stepId} is not granted scope ${missing.join(", ")} required by ${name}`,
      { step: options.stepId, tool: name, missing_scopes: missing },
    );
  }
  if (POLICY_APPROVAL_TOOLS.has(name) && options.policyApproved !== true) {
    throw new RuntimeError(
      "POLICY_DENIED",
      `${name} requires verified policy approval evidence: call it from a graph step guarded by an approved run: approval step`,
      { step: options.stepId, tool: name, reason: "policy_approval_required" },
    );
  }
  const check = tool.validateInput(input);
  if (!check.ok) {
    throw new RuntimeError("INPUT_INVALID", `${name} input ${check.path}: ${check.message}`, {
      step: options.stepId,
      tool: name,
      path: check.path,
    });
  }
  return tool.execute(input as JsonRecord, toolContextFor(scope, options));
}
