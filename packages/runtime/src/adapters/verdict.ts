/**
 * How an adapter process that ran to its end is judged: a non-zero exit fails whatever the
 * manifest says; otherwise the collected output manifest is the only status channel, and a
 * claim of authority the attempt was not granted fails it.
 */
import type { DispatchReceiptBody } from "./dispatch-receipt.js";
import { MANIFEST_FILE, type Collection } from "./manifest.js";
import { dispatchFailure, type DispatchFailure, type FailureCode } from "./vocabulary.js";

/** The status, failure and receipt fields of a finished attempt. */
export interface AttemptVerdict {
  status: DispatchReceiptBody["status"];
  failure: DispatchFailure | null;
  extra: Partial<DispatchReceiptBody>;
  questions: Array<{ question_id: string; prompt: string; answer_schema?: unknown }>;
}

/** Judges one finished attempt from its exit status and its collected outputs. */
export function attemptVerdict(opts: {
  exitCode: number | null;
  collected: Collection;
  /** The authority the attempt was granted. */
  granted: readonly string[];
  /** The receipt's authority section before the adapter's claims are added. */
  baseAuthority: () => DispatchReceiptBody["authority"];
  /** The attempt's directory, relative to the workspace. */
  rel: string;
  scrub: (text: string) => string;
}): AttemptVerdict {
  const { exitCode, collected, granted, baseAuthority, rel, scrub } = opts;
  const done = (
    status: AttemptVerdict["status"],
    failure: DispatchFailure | null,
    extra: Partial<DispatchReceiptBody> = {},
    questions: AttemptVerdict["questions"] = [],
  ): AttemptVerdict => ({ status, failure, extra, questions });
  const manifestRecord = (
    status: string | null,
    sha: string | null,
  ): DispatchReceiptBody["output_manifest"] =>
    sha === null ? null : { path: `${rel}/out/${MANIFEST_FILE}`, sha256: sha, status };
  if (exitCode !== 0) {
    return done(
      "failed",
      dispatchFailure(
        "runtime_non_zero",
        `the adapter exited with status ${exitCode ?? "unknown"}`,
      ),
      {
        output_manifest: manifestRecord(
          collected.manifest?.status ?? null,
          collected.manifestSha256 ?? null,
        ),
        undeclared_outputs: collected.undeclared,
      },
    );
  }
  if (!collected.ok) {
    return done("failed", dispatchFailure(collected.code, collected.message), {
      output_manifest: manifestRecord(
        collected.manifest?.status ?? null,
        collected.manifestSha256 ?? null,
      ),
      undeclared_outputs: collected.undeclared,
    });
  }
  const manifest = collected.manifest;
  const claimed = [...(manifest.authority_used ?? [])].sort();
  const violations = claimed.filter((w) => !granted.includes(w));
  const extra: Partial<DispatchReceiptBody> = {
    output_manifest: manifestRecord(manifest.status, collected.manifestSha256),
    artifacts: collected.artifacts,
    undeclared_outputs: collected.undeclared,
    questions: (manifest.questions ?? []).map((q) => ({ question_id: q.question_id })),
    summary: manifest.summary !== undefined ? scrub(manifest.summary) : null,
    authority: {
      ...baseAuthority(),
      claimed_used: claimed.map(scrub),
      violations: violations.map(scrub),
    },
  };
  if (violations.length > 0) {
    return done(
      "failed",
      dispatchFailure(
        "authority_violation",
        `the adapter claims authority it was not granted: ${violations.map(scrub).join(", ")}`,
      ),
      extra,
    );
  }
  switch (manifest.status) {
    case "completed":
      return done("completed", null, extra);
    case "needs_input":
      return done(
        "blocked",
        null,
        extra,
        (manifest.questions ?? []).map((q) => ({ ...q, prompt: scrub(q.prompt) })),
      );
    case "blocked":
      return done(
        "blocked",
        dispatchFailure(
          "runtime_blocked",
          manifest.blocker !== undefined
            ? `${manifest.blocker.code}: ${manifest.blocker.message}`
            : "the adapter reported blocked",
        ),
        extra,
      );
    default: {
      const code = manifest.failure?.code;
      const portable: FailureCode =
        code === "prompt_not_accepted" || code === "verification_failed" ? code : "runtime_error";
      return done(
        "failed",
        dispatchFailure(portable, manifest.failure?.message ?? "the adapter reported failure"),
        extra,
      );
    }
  }
}
