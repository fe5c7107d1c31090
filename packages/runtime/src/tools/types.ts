/**
 * The native tool contract. Every native tool (fs.*, command.execute, http.*, web.fetch,
 * provider.*, artifact.*) is a `NativeTool`: a name, JSON Schema contracts for its input and
 * output (the same documents `runx tool inspect --json` shows and managed agents are offered),
 * the scopes it requires, whether it mutates, and an `execute` that receives validated input
 * and an explicit context. Tools never read process.env or ambient state.
 */
import type { ReceiptLookup } from "../receipts/lookup.js";
import type { TaintSet } from "../redaction.js";
import type { Resolver } from "./http/net-guard.js";
import type { ReceiptHistory } from "./receipt/history.js";

export type { ReceiptLookup } from "../receipts/lookup.js";

import type { Json, JsonRecord } from "../contracts/json.js";
export type { Json, JsonRecord } from "../contracts/json.js";

/** Transport for the HTTP tools; the harness replaces it with fixture lanes. */
export interface HttpTransport {
  /** Performs one request; implementations enforce their own time and size limits. */
  request(req: HttpRequest, signal: AbortSignal): Promise<HttpResponse>;
}

/** One outgoing HTTP request (after admission). */
export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** Response bytes beyond this are refused (the tool fails, nothing is truncated silently). */
  maxResponseBytes: number;
  timeoutMs: number;
  /**
   * What the calling tool declares the request to be: a `read` (GET), a semantically
   * read-only `query` (http.query POST) or a `mutate` (http.execute). Transports may use it
   * to decide which replay lane may answer; it never changes what is sent.
   */
  access?: "read" | "query" | "mutate";
}

/** One HTTP response. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  /** The final URL after redirects (redirects are re-admitted by the tool, not followed blindly). */
  url: string;
}

/** A human decision on an approval gate, supplied on resume (never by an agent). */
export interface ApprovalDecision {
  approved: boolean;
  reason?: string;
  /** Who decided (host-attested); the CLI records "local-operator". */
  actor?: string;
  decided_at?: string;
}

/** The runtime-built summary an approver sees (never free text from the package). */
export interface ApprovalSummary {
  provider: string;
  operation: string;
  target: string;
  scopes: string[];
  payload_digest: string;
  plan_digest: string;
  /** `runx:grant:<grant id>` of the grant the effect runs under (provider mutations). */
  grant_ref?: string;
  /** The principal holding that grant (provider mutations). */
  principal_ref?: string;
  /** The step's scopes as the plan binds them: sorted, each once (provider mutations). */
  required_scopes?: string[];
  amount?: { units: number; unit: string };
  /**
   * For a `message.*` operation: who it goes to, on which channel, what content (by digest)
   * and on what consent basis, read from the admitted payload the payload digest binds.
   */
  message?: { channel: string; audience: Json; content_digest: Json; consent_basis: Json };
}

/** A request to pause for one human decision. */
export interface ApprovalRequestSpec {
  gate_id: string;
  gate_type?: string;
  reason: string;
  summary: ApprovalSummary;
}

/** Idempotency and effect bookkeeping for mutating tools (persisted by the runtime). */
export interface EffectLedger {
  /** The recorded result for an idempotency key, if the effect already happened. */
  lookup(key: string): Promise<{ request_digest: string; output: JsonRecord } | undefined>;
  /** Records an effect's result under its key (append-only; a different digest is refused). */
  record(key: string, entry: { request_digest: string; output: JsonRecord }): Promise<void>;
  /**
   * Claims a key for one request before its effect starts, atomically across processes:
   * `claimed` for the first claimant, `held` when the same request already holds it (another
   * caller is running or ran the effect: wait for its recorded outcome), IDEMPOTENCY_CONFLICT
   * when another request holds it. Ledgers without it cannot run claim-gated effects.
   */
  claim?(key: string, requestDigest: string): Promise<"claimed" | "held">;
}

/** Facts of the calling step a driver may need to select its grant. */
export interface ProviderCallFacts {
  /** Scopes granted to the calling step (exact strings). */
  scopes: readonly string[];
}

/**
 * Who a provider effect runs as: the grant a driver selects for the calling step and the
 * principal that holds it (upstream runx's provider effect authority). Both are bound into
 * the effect plan an approver decides on.
 */
export interface ProviderAuthority {
  grant_id: string;
  /** `runx:principal:<id>`. */
  principal_ref: string;
}

/** A provider driver (local fixture provider, harness response lane; hosted drivers later). */
export interface ProviderDriver {
  readonly name: string;
  read(
    operation: string,
    target: string,
    input: JsonRecord,
    call?: ProviderCallFacts,
  ): Promise<JsonRecord>;
  mutate(
    operation: string,
    target: string,
    payload: JsonRecord,
    idempotencyKey: string,
    call?: ProviderCallFacts,
  ): Promise<JsonRecord>;
  /**
   * The grant and principal a call with these facts would run under; refuses (throws) when
   * no grant, or more than one, selects it. A driver without grants of its own omits it and
   * runs as the local runtime (`LOCAL_PROVIDER_AUTHORITY` in tools/provider.ts).
   */
  authority?(call: ProviderCallFacts): ProviderAuthority;
}

/** One payee the workspace registered: its party and the one settlement reference it is paid at. */
export interface RegisteredPayee {
  party_ref: string;
  name: string;
  settlement_ref?: string;
  settlement_digest?: string;
}

/** Everything a tool may use. Created per invocation by the runtime. */
export interface ToolContext {
  workspaceRoot: string;
  /** The package directory of the skill whose graph called the tool (`path_scope: skill`). */
  packageDir: string;
  runId: string;
  stepId: string;
  signal: AbortSignal;
  /** Scopes granted to this step (exact strings). */
  scopes: readonly string[];
  /** Baseline environment for process tools (deny-by-default is applied by the tool). */
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** The runner declared `allow_private_network: true`. */
  allowPrivateNetwork: boolean;
  http: HttpTransport;
  /**
   * Name resolution for network admission; when absent the tool's own (the system resolver).
   * The harness's fixture lanes supply one that never queries DNS.
   */
  resolver?: Resolver;
  providers: ReadonlyMap<string, ProviderDriver>;
  effects: EffectLedger;
  /** Scratch/state directory owned by this run (`.runx/runs/<run_id>`). */
  runDir: string;
  /**
   * runx's own state beyond the workspace's `.runx/` and `runDir` (the receipt directory,
   * `$RUNX_HOME`, the registry): no tool path may reach it (tools/runx-state.ts).
   */
  stateRoots: readonly string[];
  /** Human decisions available to this step (from a resume), by gate id. */
  approvals: ReadonlyMap<string, ApprovalDecision>;
  taint: TaintSet;
  /** The run's receipt store, read-only and proof-verifying. */
  receipts: ReceiptLookup;
  /**
   * Secrets the run delivered (the runner's resolved credential and `--secret-env` values, all
   * in `taint`) and the hosts the resolved credential's audience binds; the HTTP tools' `auth`
   * reads them. Absent: nothing was delivered.
   */
  credentials?: { secrets: Readonly<Record<string, string>>; audienceHosts: readonly string[] };
  /** The run's receipt history (receipt.query, receipt.prove); absent where a host has none. */
  history?: ReceiptHistory;
  now(): Date;
  /**
   * The payees the workspace registered (`.runx/config.json` `payments.payees`); undefined when
   * it registers none. `payment.invoice_plan` resolves an invoice's payee against them.
   */
  payees?: readonly RegisteredPayee[];
  /** Project policy; `strictInlineCode` makes command.execute refuse inline-code argv. */
  policy?: { strictInlineCode: boolean };
}

/** The outcome of one tool invocation. */
export type ToolResult =
  | { status: "success"; output: JsonRecord; summary?: string }
  | { status: "failure"; output?: JsonRecord; summary: string; code: string }
  | { status: "needs_approval"; approval: ApprovalRequestSpec }
  | { status: "declined"; summary: string; output?: JsonRecord };

/** A native tool. */
export interface NativeTool {
  name: string;
  description: string;
  /** Whether the tool changes the world (mutations need an idempotency key to be retried). */
  mutating: boolean;
  /** Scopes the caller must hold (exact strings). */
  scopes: readonly string[];
  /**
   * The idempotency key a local tool's manifest declares (`idempotency.key`); a graph step
   * calling a mutating tool that declares one may be retried under it, as a skill runner's may.
   */
  idempotencyKey?: string;
  /**
   * The tool refuses a call without its scopes itself, with a typed result (the data tools'
   * `needs_authority` envelope), so the runtime hands it the call's scopes instead of
   * refusing first.
   */
  admitsOwnScopes?: boolean;
  inputSchema: JsonRecord;
  outputSchema: JsonRecord;
  /** Validates input against `inputSchema`; returns the first error as `path: message`. */
  validateInput(input: unknown): { ok: true } | { ok: false; path: string; message: string };
  execute(input: JsonRecord, ctx: ToolContext): Promise<ToolResult>;
}
