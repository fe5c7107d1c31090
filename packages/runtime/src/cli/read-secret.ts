/**
 * Reading one secret from stdin for the commands that store one (`runx credential set`,
 * `runx config set agent.api_key`): secrets never come from the command line, where they would
 * land in shell history and process listings.
 */
import { RuntimeError } from "../errors.js";
import type { ErrorCode } from "../errors.js";
import type { CommandContext } from "./context.js";

/** A piped secret is capped (a token or an API key is far smaller). */
const MAX_STDIN_BYTES = 64 * 1024;

/**
 * The secret piped on stdin, without the one trailing newline the shell adds. `subject` names
 * it in the refusals ("credential material", "value for agent.api_key"); the value itself is
 * never part of an error.
 */
export async function readSecretFromStdin(
  ctx: CommandContext,
  refusal: { code: ErrorCode; subject: string; details?: Record<string, unknown> },
): Promise<string> {
  const fail = (message: string): RuntimeError =>
    new RuntimeError(refusal.code, message, refusal.details ?? {});
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.stdin as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > MAX_STDIN_BYTES) throw fail(`the ${refusal.subject} on stdin exceeds 64 KiB`);
    chunks.push(bytes);
  }
  const value = Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
  if (value.trim() === "") throw fail(`no ${refusal.subject} on stdin`);
  return value;
}
