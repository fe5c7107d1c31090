/**
 * What every stage of a run shares: the services it is given, the prepared run (package,
 * runner, digests, id), and the helpers that write run state and receipts consistently.
 */
import type { ResolvedCredentialRef } from "../credentials/resolve.js";
import { isRuntimeError } from "../errors.js";
import type { ProjectConfig } from "../config.js";
import type { LoadedSkillPackage } from "../packages/resolve.js";
import type { RunnerDefinition } from "../parser/runner-types.js";
import { hashCanonical, receiptBodyDigest, serializeReceipt } from "../receipts/index.js";
import type {
  AuthorityTerm,
  Commitment,
  ExecutionBoundaryKind,
  Receipt,
  ReceiptSigner,
  ReceiptStore,
  Reference,
  SkillReceiptFacts,
} from "../receipts/index.js";
import type { TaintSet } from "../redaction.js";
import type { SpawnAuthority } from "../adapters/dispatch.js";
import type { ProbeRunner } from "../adapters/preflight.js";
import type { Resolver } from "../tools/http/net-guard.js";
import type { HttpTransport, ProviderDriver } from "../tools/types.js";
import type { AsyncStateOperations, AsyncStateStore } from "../store/port.js";
import { receiptLookup } from "../store/receipt-lookup.js";
import type { ReceiptLookup } from "../store/receipt-lookup.js";
import type { StateStore } from "../store/types.js";
import type { GateBindings } from "../policy/gate-resolution.js";
import type { WorkspacePaths } from "../workspace.js";
import { displayPath } from "../workspace.js";
import { secondsTimestamp } from "../time.js";
import { appendRunEvent } from "./ledger.js";
import { originDetail } from "./origin.js";
import type { RunOrigin } from "./origin.js";
import { BASELINE_ENV_ALLOWLIST } from "../process/environment.js";
import type { DeclaredEnvironment } from "../process/environment.js";

/** Services a run needs, supplied by the composition root. */
export interface RunSkillDeps {
  paths: WorkspacePaths;
  env: Readonly<Record<string, string | undefined>>;
  /** The workspace snapshot runners receive their declared names from; `env` when unset. */
  workspaceEnv?: Readonly<Record<string, string | undefined>>;
  /** Names of `workspaceEnv` whose value came from the workspace `.env`. */
  dotenvNames?: ReadonlySet<string>;
  /** `$RUNX_HOME`: credential profiles and defaults live there. */
  runxHome?: string;
  runtimeRelease: string;
  signer(): ReceiptSigner;
  receipts(): ReceiptStore;
  /**
   * The run state store through the async port: the embedded SQLite file or the PostgreSQL
   * database RUNX_STATE_URL selects. Everything that executes a run reads and writes it.
   */
  runState(): Promise<AsyncStateStore>;
  /**
   * The embedded SQLite store itself, for what has not moved to the async port (the
   * console's tables); refused with STORE_ERROR `not_on_postgres` on PostgreSQL.
   */
  state(): StateStore;
  /**
   * What binds a paused run's gates to the console (policies, initiators), read only when a
   * resume document carries decisions (policy/gate-resolution.ts).
   */
  gateBindings(): Promise<GateBindings>;
  config(): ProjectConfig;
  now(): Date;
  randomHex(bytes: number): string;
  readStdin(): AsyncIterable<Uint8Array | string>;
  /**
   * How receipts are shaped. `live` (default) binds real idempotency commitments, stream and
   * input commitments, the execution boundary and unsigned metadata. `harness` reproduces
   * upstream's harness receipts byte for byte: the case name as the receipt name, a fixed
   * clock, upstream's placeholder idempotency values and no live-only fields.
   */
  receiptProfile?: ReceiptProfile;
  /** The user's agent configuration ($RUNX_HOME/config.json), when a managed agent is set up. */
  agentConfig?(): Promise<ManagedAgentSettings | undefined>;
  /** Replacement tool transports (harness fixture lanes only; live runs never set them). */
  toolLanes?: ToolLanes;
  /** Replacement probe runner for adapter preflight (git, tool version); tests only. */
  adapterProbe?: ProbeRunner;
  /** Called right before an adapter process is spawned; tests spy on spawns with it. */
  onAdapterSpawn?: () => void;
  /**
   * Host-attested human approvals that released this continuation (set only by the console's
   * decide path, never from a resume document): signed into every receipt it seals.
   */
  attestedApprovals?: readonly AuthorityTerm[];
  /** The local skill registry (registry refs in `runx skill` and graph `skill:` steps). */
  registry?(): RegistryResolver;
  /**
   * runx's own state outside the workspace's `.runx/` and receipt dir (`$RUNX_HOME`, the
   * registry root), which native tools may never reach (tools/runx-state.ts).
   */
  stateRoots?(): readonly string[];
}

/** What a run needs from the registry: a verified package materialised for execution. */
export interface RegistryResolver {
  /** The registry root directory (context skills read records from it). */
  readonly root: string;
  /** May load the registry on demand (a run that names no registry package never does). */
  materializeForRun(
    ref: string,
    options?: { digest?: string },
  ):
    | { packageDir: string; record: { package_digest: string } }
    | Promise<{ packageDir: string; record: { package_digest: string } }>;
}

/**
 * What the harness replaces for native tools: the HTTP transport together with a resolver
 * that never queries DNS, and the provider drivers. Only code constructs these (the harness
 * from a fixture's `caller` lanes); no input, environment variable or config file can.
 */
export interface ToolLanes {
  http?: { transport: HttpTransport; resolver: Resolver };
  /** When set, provider tools see exactly these drivers and nothing else. */
  providers?: ReadonlyMap<string, ProviderDriver>;
}

/** See {@link RunSkillDeps.receiptProfile}. */
export type ReceiptProfile =
  { kind: "live" } | { kind: "harness"; name: string; createdAt: string };

/** The receipt facts that differ between live runs and harness replays. */
export interface ProfiledFacts {
  name: string;
  createdAt: string;
  commitments?: Commitment[];
  executionBoundary?: ExecutionBoundaryKind;
  idempotency?: Receipt["idempotency"];
  metadata?: Record<string, unknown>;
}

/**
 * Applies the receipt profile: live facts pass through; a harness replay renames the receipt
 * to the case, pins the clock and drops the live-only fields (so upstream's oracles hold).
 */
export function profiled(deps: RunSkillDeps, facts: ProfiledFacts): SkillFactsProfile {
  const profile = deps.receiptProfile;
  if (profile === undefined || profile.kind === "live") {
    return deps.attestedApprovals === undefined || deps.attestedApprovals.length === 0
      ? (facts as SkillFactsProfile)
      : ({ ...facts, authorityTerms: deps.attestedApprovals } as SkillFactsProfile);
  }
  return { name: profile.name, createdAt: profile.createdAt };
}

/** The profile-dependent part of a receipt builder's facts. */
export type SkillFactsProfile = Pick<SkillReceiptFacts, "name" | "createdAt"> &
  Partial<
    Pick<
      SkillReceiptFacts,
      "commitments" | "executionBoundary" | "idempotency" | "metadata" | "authorityTerms"
    >
  >;

/** Managed agent settings (provider, model, key, endpoint). */
export interface ManagedAgentSettings {
  provider: string;
  model: string;
  apiKey: string;
  baseUrl: string;
}

/** A resolved, digest-bound run: everything after the package and runner resolved. */
export interface Prepared {
  pkg: LoadedSkillPackage;
  runner: RunnerDefinition;
  runId: string;
  packageDigest: string;
  closureDigest: string;
  preparedContextDigest: string;
  /** Who started or resumed the run, through which entry point (recorded in the ledger). */
  origin?: RunOrigin;
}

/** The state of one run in flight: secrets delivered and their taint set. */
export interface RunScope {
  deps: RunSkillDeps;
  prep: Prepared;
  secrets: Record<string, string>;
  /** The credential the selected runner declares, once resolved (never the material). */
  credential?: ResolvedCredentialRef;
  taint: TaintSet;
  signal: AbortSignal;
  /** Set while a nested graph runs as one step of an enclosing graph. */
  nest?: NestedGraphScope;
  /** Spawn authority of an operator-originated invocation (`--allow-spawn`); never from inputs. */
  spawnAuthority?: SpawnAuthority;
}

/** Where a nested graph runs: the step path from the root graph, and the graphs above it. */
export interface NestedGraphScope {
  /** Step ids from the root graph down to the step running this graph (`["spend"]`). */
  path: string[];
  /** `<package dir>#<runner>` of every graph running above this one, root first. */
  chain: string[];
}

/** A step's key within its run: its id, prefixed by the steps of enclosing graphs (`spend/quote`). */
export function stepKey(scope: Pick<RunScope, "nest">, stepId: string): string {
  return [...(scope.nest?.path ?? []), stepId].join("/");
}

/** Receipt timestamps: RFC 3339 UTC at second precision, like upstream. */
export function receiptTimestamp(date: Date): string {
  return secondsTimestamp(date);
}

/** The reference a later receipt uses to point at an earlier one (id + body digest). */
export function receiptReference(receipt: Receipt): Reference {
  return {
    type: "receipt",
    uri: `runx:receipt:${receipt.id}`,
    locator: receiptBodyDigest(receipt),
  };
}

/** Inserts the run record and its `run_started` ledger line through `db` (a store or a transaction). */
export async function createRunRecord(
  db: AsyncStateOperations,
  deps: RunSkillDeps,
  prep: Prepared,
  inputsDigest: string,
): Promise<void> {
  await db.createRun({
    id: prep.runId,
    skillName: prep.pkg.name,
    runner: prep.runner.name,
    skillRef: displayPath(deps.paths.root, prep.pkg.graphDocumentPath ?? prep.pkg.packageDir),
    packageDir: displayPath(deps.paths.root, prep.pkg.packageDir),
    packageDigest: prep.packageDigest,
    executionClosureDigest: prep.closureDigest,
    inputsDigest,
  });
  // The run's first ledger line: who started it, and the steps it plans to run (a graph's
  // steps in declaration order), so a paused run can show the steps it has not reached.
  await appendRunEvent(db, prep.runId, {
    kind: "run_started",
    status: "running",
    detail: { origin: originDetail(prep.origin), plan: runPlan(prep.runner) },
    producer: { skill: prep.pkg.name, runner: prep.runner.name },
    createdAt: deps.now().toISOString(),
  });
}

/**
 * Marks the run running in one transaction, with `more` of the caller's writes: a fresh run
 * gets its record and first ledger line, a resumed one its status back.
 */
export async function recordRunning(
  deps: RunSkillDeps,
  prep: Prepared,
  fresh: { runExists: boolean; inputsDigest: string },
  more?: (tx: AsyncStateOperations) => Promise<void>,
): Promise<void> {
  await (
    await deps.runState()
  ).transaction(async (tx) => {
    if (!fresh.runExists) await createRunRecord(tx, deps, prep, fresh.inputsDigest);
    else await tx.updateRun(prep.runId, { status: "running" });
    await more?.(tx);
  });
}

/** One planned step as the `run_started` ledger line lists it. */
export interface PlannedStep {
  step_id: string;
  label: string | null;
  /** `tool`, `skill`, or the inline source's type (`approval`, `cli-tool` …); a runner's type. */
  kind: string;
}

/**
 * The steps a runner plans: a graph's declared steps (read from the runner's document
 * without loading the graph engine, which single-step runs never load), else the runner
 * itself as the one step.
 */
export function runPlan(runner: RunnerDefinition): PlannedStep[] {
  if (runner.type !== "graph") return [{ step_id: runner.name, label: null, kind: runner.type }];
  const steps = (runner.graph as { steps?: unknown }).steps;
  return (Array.isArray(steps) ? (steps as unknown[]) : []).flatMap((raw): PlannedStep[] => {
    if (raw === null || typeof raw !== "object") return [];
    const step = raw as {
      id?: unknown;
      label?: unknown;
      tool?: unknown;
      skill?: unknown;
      run?: unknown;
    };
    if (typeof step.id !== "string") return [];
    const run = step.run as { type?: unknown } | undefined;
    const kind =
      typeof step.tool === "string"
        ? "tool"
        : typeof step.skill === "string"
          ? "skill"
          : typeof run?.type === "string"
            ? run.type
            : "step";
    return [{ step_id: step.id, label: typeof step.label === "string" ? step.label : null, kind }];
  });
}

/**
 * Writes a sealed receipt durably to the receipt store, then indexes it and applies the run's
 * state changes (`andThen`, through the transaction handle) in one state-store transaction.
 * Where the state store holds receipts itself (PostgreSQL), the receipt's exact bytes go
 * into that same transaction, so the row, the index entry, the ledger line and the run update
 * commit together; the file written first is the workspace's local copy.
 */
export async function storeReceipt(
  deps: RunSkillDeps,
  prep: Prepared,
  receipt: Receipt,
  andThen?: (tx: AsyncStateOperations) => Promise<void>,
  options: { isChild?: boolean } = {},
): Promise<void> {
  const outcome = await deps.receipts().write(receipt);
  const state = await deps.runState();
  await state.transaction(async (tx) => {
    await tx.receiptRows?.put(receipt.id, serializeReceipt(receipt));
    await tx.indexReceipt({
      receiptId: receipt.id,
      runId: prep.runId,
      skillName: prep.pkg.name,
      disposition: receipt.seal.disposition,
      createdAt: receipt.created_at,
      fileName: outcome.file_name,
      isChild: options.isChild === true,
    });
    await andThen?.(tx);
  });
}

/** Reads receipts by id: the state store's receipt rows where it has them, else the files. */
export async function runReceipts(deps: RunSkillDeps): Promise<ReceiptLookup> {
  return receiptLookup(deps.receipts(), (await deps.runState()).receiptRows);
}

/**
 * Live-run idempotency commitments: the intent (skill, runner, package), the trigger (this
 * run, and the step within it) and the content (its inputs). Binding the run makes two
 * otherwise identical runs distinct receipts instead of colliding content addresses.
 */
export function idempotencyFor(
  prep: Prepared,
  contentDigest: string,
  stepId?: string,
  previous?: Reference,
): Receipt["idempotency"] {
  return {
    intent_key: hashCanonical({
      skill: prep.pkg.name,
      runner: prep.runner.name,
      package_digest: prep.packageDigest,
      ...(stepId !== undefined ? { step: stepId } : {}),
    }),
    // A continuation names the receipt it continues, so a resumed run never collides with
    // the content address of its own earlier pause.
    trigger_fingerprint: hashCanonical({
      run_id: prep.runId,
      ...(stepId !== undefined ? { step: stepId } : {}),
      ...(previous !== undefined ? { previous: previous.uri } : {}),
    }),
    content_hash: contentDigest,
  };
}

/** Unsigned receipt metadata naming the run. */
export function runMetadata(deps: RunSkillDeps, prep: Prepared): Record<string, string> {
  return {
    run_id: prep.runId,
    skill: prep.pkg.name,
    runner: prep.runner.name,
    runner_type: prep.runner.type,
    package: displayPath(deps.paths.root, prep.pkg.packageDir),
    package_digest: prep.packageDigest,
    execution_closure_digest: prep.closureDigest,
    runtime_release: deps.runtimeRelease,
  };
}

/** Marks a run record (if one exists) as failed, through `db` (a store or a transaction). */
export async function markRunFailed(
  db: AsyncStateOperations,
  runId: string,
  receiptId?: string,
  disposition = "blocked",
): Promise<void> {
  try {
    await db.updateRun(runId, {
      status: "failure",
      disposition,
      ...(receiptId !== undefined ? { receiptId } : {}),
    });
  } catch (error) {
    if (!isRuntimeError(error) || error.code !== "RUN_NOT_FOUND") throw error;
  }
}

/** A `sha256` commitment in the receipt's subject. */
export function commitment(scope: Commitment["scope"], value: string): Commitment {
  return { scope, algorithm: "sha256", value, canonicalization: "runx.stable-json.v1" };
}

/**
 * The base environment a runner's child is built from: the workspace snapshot, except that
 * the baseline names (PATH, HOME, …) come from the exported process alone. A value the
 * workspace `.env` supplied for a name the runner declares enters the run's taint set, as a
 * `--secret-env` value does: `.env` is where development secrets live.
 */
export function runnerBaseEnv(
  scope: RunScope,
  runner: { environment?: DeclaredEnvironment | undefined } | object,
): Readonly<Record<string, string | undefined>> {
  const { deps } = scope;
  const snapshot = deps.workspaceEnv ?? deps.env;
  const fromDotenv = deps.dotenvNames;
  if (fromDotenv === undefined || fromDotenv.size === 0) return snapshot;
  const env: Record<string, string | undefined> = { ...snapshot };
  for (const name of BASELINE_ENV_ALLOWLIST) if (fromDotenv.has(name)) delete env[name];
  const declared = "environment" in runner ? runner.environment : undefined;
  for (const name of [...(declared?.required ?? []), ...(declared?.optional ?? [])]) {
    const value = env[name];
    if (fromDotenv.has(name) && value !== undefined && value !== "") scope.taint.add(value);
  }
  return env;
}
