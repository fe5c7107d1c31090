/**
 * What the console shows about an adapter dispatch before a human acts on it: the approval
 * card's rows for an `adapter_dispatch` gate (everything the
 * approval binds, plus who granted spawn authority), and the questions an adapter asked
 * (`question_id`, prompt, answer schema); the answer form comes from the request's contract.
 */
import type { SummaryRow } from "./summary";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

const words = (v: unknown): string =>
  Array.isArray(v) && v.length > 0 ? v.map(String).join(", ") : "none";

/** Bytes in the unit a human reads (exact KiB/MiB when they divide, else bytes). */
export function bytesText(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} B`;
}

function msText(n: number): string {
  return n >= 1000 && n % 1000 === 0 ? `${n / 1000} s` : `${n} ms`;
}

function limitsText(limits: unknown): string {
  if (!isRecord(limits)) return "—";
  const num = (k: string): number | null => (typeof limits[k] === "number" ? limits[k] : null);
  const parts: string[] = [];
  const timeout = num("timeout_ms");
  const grace = num("grace_ms");
  if (timeout !== null) parts.push(`timeout ${msText(timeout)}`);
  if (grace !== null) parts.push(`grace ${msText(grace)}`);
  for (const [key, label] of [
    ["max_stdout_bytes", "stdout"],
    ["max_stderr_bytes", "stderr"],
    ["hard_output_bytes", "output hard cap"],
  ] as const) {
    const v = num(key);
    if (v !== null) parts.push(`${label} ${bytesText(v)}`);
  }
  const count = num("max_artifacts");
  const each = num("max_artifact_bytes");
  const total = num("max_total_artifact_bytes");
  if (count !== null && each !== null && total !== null) {
    parts.push(`artifacts ${count} × ${bytesText(each)} (${bytesText(total)} total)`);
  }
  return parts.length > 0 ? parts.join("; ") : "—";
}

function workspaceText(ws: unknown): string {
  if (!isRecord(ws)) return "—";
  const worktree = str(ws.worktree_ref);
  const branch = str(ws.branch);
  const base = str(ws.base_commit);
  if (worktree === null && branch === null && base === null) {
    return "no worktree (runs in its own output directory)";
  }
  return [
    `worktree ${worktree ?? "—"}`,
    `branch ${branch ?? "—"}`,
    `base commit ${base ?? "—"}`,
  ].join(", ");
}

/**
 * The rows of an adapter dispatch approval, in a fixed order. `spawnGrantedBy` is the operator
 * who granted the run spawn authority when starting it from the console (null: none, so a
 * console release records a dry run).
 */
export function adapterGateRows(summary: unknown, spawnGrantedBy: string | null): SummaryRow[] {
  const s = isRecord(summary) ? summary : {};
  const packet = str(s.packet_id) ?? "—";
  const retry = str(s.retry_of);
  const network = str(s.network) ?? "none";
  return [
    { label: "Adapter", value: str(s.adapter_id) ?? "—", mono: true },
    { label: "Adapter digest", value: str(s.definition_digest) ?? "—", mono: true },
    { label: "Packet digest", value: str(s.packet_digest) ?? "—", mono: true },
    {
      label: "Packet",
      value: retry !== null ? `${packet} (answers to ${retry})` : packet,
      mono: true,
    },
    { label: "Authority requested", value: words(s.authority_requested), mono: false },
    { label: "Authority granted", value: words(s.authority_granted), mono: false },
    {
      label: "Network",
      value: `${network} (declared by the adapter; not enforced)`,
      mono: false,
    },
    { label: "Credentials", value: words(s.credential_refs), mono: true },
    { label: "Limits", value: limitsText(s.limits), mono: false },
    { label: "Workspace", value: workspaceText(s.workspace), mono: false },
    { label: "Approval expires", value: str(s.expires_at) ?? "—", mono: false },
    {
      label: "Spawn authority",
      value:
        spawnGrantedBy !== null
          ? `granted by ${spawnGrantedBy} when starting the run`
          : "not granted from the console: approving here records a dry run (nothing launches)",
      mono: false,
    },
  ];
}

/** One question an adapter asked. */
export interface AdapterQuestion {
  question_id: string;
  prompt: string;
  answer_schema: unknown;
}

/** The questions of an adapter's `needs_input` request, or null for any other request. */
export function adapterQuestions(invocation: unknown): {
  adapterId: string;
  packetId: string;
  dispatchReceiptId: string | null;
  questions: AdapterQuestion[];
} | null {
  if (!isRecord(invocation) || invocation.type !== "adapter_questions") return null;
  const questions = Array.isArray(invocation.questions)
    ? invocation.questions.filter(isRecord).map((q) => ({
        question_id: str(q.question_id) ?? "",
        prompt: typeof q.prompt === "string" ? q.prompt : "",
        answer_schema: q.answer_schema ?? null,
      }))
    : [];
  return {
    adapterId: str(invocation.adapter_id) ?? "—",
    packetId: str(invocation.packet_id) ?? "—",
    dispatchReceiptId: str(invocation.dispatch_receipt_id),
    questions: questions.filter((q) => q.question_id !== ""),
  };
}
