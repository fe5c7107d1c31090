/**
 * The work packet (`work-packet.v1`): the immutable hand-off built from a
 * step's inputs. Pure: facts in, a packet with its canonical digest out, and the
 * executable-package check (`package_not_executable`) naming every missing piece.
 */
import { hashCanonical } from "../receipts/index.js";
import { effectiveAuthority, isAuthorityWord } from "./vocabulary.js";

/** A question the packet carries; `blocking` is a structured flag, never guessed from text. */
export interface OpenQuestion {
  question_id: string;
  text: string;
  blocking: boolean;
}

/** `work-packet.v1`. */
export interface WorkPacket {
  schema: "work-packet.v1";
  packet_id: string;
  run_id: string;
  step_id: string;
  graph_run_id: string | null;
  skill: { name: string; version: string | null; digest: string };
  task_id: string | null;
  retry_of: string | null;
  created_at: string;
  objective: string;
  acceptance_criteria: string[];
  verification: string[];
  constraints: string[];
  non_goals: string[];
  open_questions: OpenQuestion[];
  lane: string;
  workflow: string | null;
  adapter_id: string;
  authority: { requested: string[]; commit_policy: string };
  workspace: { worktree_ref: string | null; branch: string | null; base_commit: string | null };
  output: { out_dir: string };
  answers: Array<{ question_id: string; value: unknown }>;
  /** Test-only behaviour selector of the fake-local adapter; null everywhere else. */
  fixture_mode: string | null;
  packet_digest: string;
}

/** What the runtime knows when it builds a packet. */
export interface PacketFacts {
  packetId: string;
  runId: string;
  stepId: string;
  graphRunId?: string | null;
  skill: { name: string; version: string | null; digest: string };
  taskId?: string | null;
  retryOf?: string | null;
  createdAt: string;
  /** The step inputs (objective, acceptance_criteria, verification, ...). */
  inputs: Readonly<Record<string, unknown>>;
  lane: string;
  workflow: string | null;
  adapterId: string;
  requested: readonly string[];
  commitPolicy: string;
  workspace: WorkPacket["workspace"];
  outDir: string;
  fixtureMode: string | null;
}

const strings = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.filter((v): v is string => typeof v === "string" && v.trim() !== "")
    : typeof value === "string" && value.trim() !== ""
      ? [value]
      : [];

function questionsOf(value: unknown): OpenQuestion[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((item, i) => {
    if (typeof item !== "object" || item === null) return [];
    const q = item as Record<string, unknown>;
    return [
      {
        question_id: typeof q.question_id === "string" ? q.question_id : `q${i + 1}`,
        text: typeof q.text === "string" ? q.text : "",
        blocking: q.blocking === true,
      },
    ];
  });
}

/** The digest of a packet: canonical JSON without `packet_digest`. */
export function packetDigest(
  packet: Omit<WorkPacket, "packet_digest"> & { packet_digest?: string },
): string {
  const body: Record<string, unknown> = { ...packet };
  delete body.packet_digest;
  return hashCanonical(body);
}

/** Builds the packet; the authority carries every prohibition whatever was requested. */
export function buildWorkPacket(facts: PacketFacts): WorkPacket {
  const answers = Array.isArray(facts.inputs.answers)
    ? (facts.inputs.answers as unknown[]).flatMap((a) =>
        typeof a === "object" &&
        a !== null &&
        typeof (a as { question_id?: unknown }).question_id === "string"
          ? [
              {
                question_id: (a as { question_id: string }).question_id,
                value: (a as { value?: unknown }).value ?? null,
              },
            ]
          : [],
      )
    : [];
  const body: Omit<WorkPacket, "packet_digest"> = {
    schema: "work-packet.v1",
    packet_id: facts.packetId,
    run_id: facts.runId,
    step_id: facts.stepId,
    graph_run_id: facts.graphRunId ?? null,
    skill: { ...facts.skill },
    task_id: facts.taskId ?? null,
    retry_of: facts.retryOf ?? null,
    created_at: facts.createdAt,
    objective: typeof facts.inputs.objective === "string" ? facts.inputs.objective.trim() : "",
    acceptance_criteria: strings(facts.inputs.acceptance_criteria),
    verification: strings(facts.inputs.verification),
    constraints: strings(facts.inputs.constraints),
    non_goals: strings(facts.inputs.non_goals),
    open_questions: questionsOf(facts.inputs.open_questions),
    lane: facts.lane,
    workflow: facts.workflow,
    adapter_id: facts.adapterId,
    authority: { requested: [...facts.requested].sort(), commit_policy: facts.commitPolicy },
    workspace: { ...facts.workspace },
    output: { out_dir: facts.outDir },
    answers,
    fixture_mode: facts.fixtureMode,
  };
  return { ...body, packet_digest: packetDigest(body) };
}

/** The granted authority of a packet (request plus every prohibition). */
export function packetAuthority(packet: WorkPacket): string[] {
  return effectiveAuthority(packet.authority.requested);
}

/**
 * Why a packet is not executable, or undefined when it is: a missing objective, acceptance
 * criteria or verification, an invalid scope, or a blocking open question (ids named).
 */
export function notExecutableReason(packet: WorkPacket): string | undefined {
  const missing: string[] = [];
  if (packet.objective === "") missing.push("objective");
  if (packet.acceptance_criteria.length === 0) missing.push("acceptance_criteria");
  if (packet.verification.length === 0) missing.push("verification");
  if (packet.lane === "") missing.push("lane");
  if (missing.length > 0) return `the work packet is missing ${missing.join(", ")}`;
  const unknown = packet.authority.requested.filter((word) => !isAuthorityWord(word));
  if (unknown.length > 0)
    return `the work packet's scope names unknown authority words: ${unknown.join(", ")}`;
  if (packet.authority.commit_policy !== "commit_forbidden") {
    return `the work packet's commit policy is ${packet.authority.commit_policy || "missing"}; an adapter never commits (commit_forbidden)`;
  }
  const answered = new Set(packet.answers.map((a) => a.question_id));
  const blocking = packet.open_questions.filter((q) => q.blocking && !answered.has(q.question_id));
  if (blocking.length > 0) {
    return `the work packet has blocking open questions: ${blocking.map((q) => q.question_id).join(", ")}`;
  }
  return undefined;
}
