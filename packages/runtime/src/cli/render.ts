/** Human-readable rendering helpers (TTY-aware colour, key/value blocks). */
import type { SkillRunEnvelope } from "../contracts/envelope.js";

/** Minimal ANSI styling that disappears when colour is off. */
export function styler(color: boolean): {
  ok(s: string): string;
  bad(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
} {
  const wrap = (code: string) => (s: string) => (color ? `\u001b[${code}m${s}\u001b[0m` : s);
  return { ok: wrap("32"), bad: wrap("31"), dim: wrap("2"), bold: wrap("1") };
}

/** Quotes a shell word when needed. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:@=-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}

/** The text form of a run envelope. */
export function renderEnvelope(e: SkillRunEnvelope, color: boolean): string {
  const s = styler(color);
  const statusText =
    e.status === "sealed" && e.outcome === "completed"
      ? s.ok(e.status)
      : e.status === "sealed"
        ? s.bad(e.status)
        : s.bold(e.status);
  const lines = [
    `status: ${statusText}`,
    `outcome: ${e.outcome}`,
    `skill: ${e.skill_name} (runner ${e.runner})`,
    `run_id: ${e.run_id}`,
    `receipt_id: ${e.receipt_id ?? "-"}`,
  ];
  const summary =
    typeof e.result?.summary === "string" ? e.result.summary : (e.closure?.summary ?? undefined);
  if (summary !== undefined) lines.push(`summary: ${summary}`);
  if (e.result !== null) {
    const json = JSON.stringify(e.result, null, 2);
    lines.push(`result: ${json.includes("\n") ? `\n${json.replace(/^/gm, "  ")}` : json}`);
  }
  if (e.requests.length > 0) {
    lines.push(`pending_requests: ${e.requests.length}`);
    for (const r of e.requests) {
      lines.push(`- ${r.kind}: ${r.id}`);
      if (r.kind === "input") {
        for (const q of r.questions)
          lines.push(`    --${q.id.replaceAll("_", "-")} <${q.type}>  ${q.prompt}`);
      }
    }
    lines.push(`answers_template: ${JSON.stringify(e.answers_template ?? {})}`);
    if (e.requests.every((r) => r.kind === "input")) {
      lines.push("next: rerun with the missing inputs as flags (see above)");
    } else {
      lines.push(
        `next: resolve the request, then run: runx resume ${shellQuote(e.run_id)} <answers-path>`,
      );
    }
  }
  const need = e.credential_requirement;
  if (need !== undefined) {
    lines.push(
      `needs_credential: ${need.credential} (provider ${need.provider}; env ${need.env.join(" or ")})`,
    );
    lines.push("set up, then run again:");
    for (const command of need.setup) lines.push(`  ${command}`);
    lines.push(`  or export ${need.env.join(" or ")} (the workspace .env also works)`);
  }
  return `${lines.join("\n")}\n`;
}
