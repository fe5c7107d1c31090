/**
 * `external_receipt.verify` (scope `receipt.read`): binds an external signed accountability
 * receipt (scafld's, written by a host that did work outside runx) to an exact commit and
 * contract fingerprint, so a graph never trusts a model-authored claim that the work was
 * checked. Two checks, both required: the receipt's signed body must name that task's
 * verdict `pass`, the target as `head_commit`, the contract as `spec_fingerprint` and no open
 * blockers; and the receipt's own canonical verifier (`scafld verify … --json`, or the binary
 * `RUNX_SCAFLD_BIN` names) must accept it with `{"ok": true}`. The verifier runs under the same
 * supervision as the Git tools (deny-by-default environment, process group, wall clock, runx
 * state hidden). The packet is upstream's `runx.external_receipt.verification.v1`.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { relative } from "node:path";
import inputSchema from "../../../schemas/tools/receipt/external-verify.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/receipt/external-verify.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsReceiptExternalVerifyInput } from "../../generated/validate-tools-receipt-external-verify.input.js";
import { superviseProcess } from "../../process/supervise.js";
import { secondsTimestamp } from "../../time.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import { isInside, resolveReadable, resolveRoot } from "../paths.js";
import { toolProcessEnv, toolStateHiding } from "../tool-process.js";
import type { JsonRecord, NativeTool, ToolContext } from "../types.js";

const TOOL = "external_receipt.verify";
/** The packet the tool emits. */
export const EXTERNAL_RECEIPT_VERIFICATION = "runx.external_receipt.verification.v1";
/** Bytes kept of each verifier stream and its wall clock, as upstream bounds them. */
const OUTPUT_LIMIT_BYTES = 256 * 1024;
const TIMEOUT_MS = 120_000;

interface Input {
  receipt_path: string;
  target: string;
  contract_digest: string;
  repo_root?: string;
}

function invalid(message: string, path?: string): RuntimeError {
  return new RuntimeError(
    "INPUT_INVALID",
    `${TOOL}: ${message}`,
    path === undefined ? {} : { path },
  );
}

function rejected(message: string): RuntimeError {
  return new RuntimeError("RECEIPT_INVALID", `${TOOL}: ${message}`);
}

/** A bounded Git ref or commit id: no option-looking, empty, whitespace or NUL forms. */
function checkTarget(target: string): void {
  if (
    target === "" ||
    target.startsWith("-") ||
    target.length > 1024 ||
    target.includes("\0") ||
    /\s/u.test(target)
  ) {
    throw invalid("target must be a bounded Git ref or commit id", "target");
  }
}

function checkDigest(digest: string): void {
  if (!/^sha256:[0-9a-fA-F]{64}$/.test(digest)) {
    throw invalid("contract_digest must be a sha256 digest", "contract_digest");
  }
}

function bodyString(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== "string" || value.trim() === "") {
    throw rejected(`receipt body omits ${field}`);
  }
  return value;
}

/** The receipt's signed body must bind this target and contract with a clean pass. */
function checkBinding(receipt: unknown, input: Input): { taskId: string; verdict: string } {
  const body =
    typeof receipt === "object" && receipt !== null
      ? (receipt as Record<string, unknown>).body
      : undefined;
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw rejected("receipt omits its signed body");
  }
  const fields = body as Record<string, unknown>;
  const taskId = bodyString(fields, "task_id");
  const verdict = bodyString(fields, "verdict");
  if (verdict !== "pass") throw rejected("receipt verdict is not pass");
  if (bodyString(fields, "head_commit") !== input.target) {
    throw rejected("receipt head_commit does not match target");
  }
  if (bodyString(fields, "spec_fingerprint") !== input.contract_digest.replace(/^sha256:/, "")) {
    throw rejected("receipt spec_fingerprint does not match contract_digest");
  }
  const blockers = fields.open_blockers;
  if (!Array.isArray(blockers)) throw rejected("receipt omits open_blockers");
  if (blockers.length > 0) throw rejected("receipt has open blockers");
  return { taskId, verdict };
}

/** Runs the canonical verifier; only a clean exit with `{"ok": true}` on stdout accepts. */
async function runVerifier(
  ctx: ToolContext,
  args: { receipt: string; target: string; root: string },
): Promise<void> {
  const configured = ctx.baseEnv.RUNX_SCAFLD_BIN;
  const command = configured !== undefined && configured.trim() !== "" ? configured : "scafld";
  const proc = await superviseProcess({
    command,
    args: ["verify", args.receipt, "--target", args.target, "--root", args.root, "--json"],
    cwd: args.root,
    env: toolProcessEnv(ctx),
    timeoutMs: TIMEOUT_MS,
    maxBytesPerStream: OUTPUT_LIMIT_BYTES,
    signal: ctx.signal,
    hideState: toolStateHiding(ctx),
  });
  if (proc.interrupted)
    throw new RuntimeError("INTERRUPTED", `${TOOL}: the verifier was interrupted`);
  if (proc.timedOut || proc.stdoutTruncated || proc.stderrTruncated || proc.outputLimited) {
    throw new RuntimeError("LIMIT_EXCEEDED", `${TOOL}: canonical verifier exceeded runtime bounds`);
  }
  if (proc.exitCode !== 0) throw rejected("canonical verifier rejected the receipt");
  let report: unknown;
  try {
    report = JSON.parse(proc.stdout.toString("utf8"));
  } catch {
    throw rejected("canonical verifier returned invalid JSON");
  }
  const ok =
    typeof report === "object" && report !== null && (report as Record<string, unknown>).ok;
  if (ok !== true) throw rejected("canonical verifier did not report success");
}

export const externalReceiptVerifyTool: NativeTool = withNamedOutput(
  defineTool<Input, JsonRecord>({
    name: TOOL,
    description:
      "Verify an external signed accountability receipt with its canonical verifier and bind it to an exact target and contract.",
    mutating: false,
    scopes: ["receipt.read"],
    inputSchema,
    outputSchema,
    validate: validateToolsReceiptExternalVerifyInput,
    async run(input, ctx) {
      checkTarget(input.target);
      checkDigest(input.contract_digest);
      const root = await resolveRoot(ctx, { repoRoot: input.repo_root });
      let rel = input.receipt_path;
      if (rel.startsWith("/")) {
        if (!isInside(root.dir, rel)) {
          throw invalid("receipt_path must identify a file within repo_root", "receipt_path");
        }
        rel = relative(root.dir, rel) || ".";
      }
      const file = await resolveReadable(root, rel, "receipt_path");
      const bytes = await readFile(file.absolute);
      const receiptDigest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
      let receipt: unknown;
      try {
        receipt = JSON.parse(bytes.toString("utf8"));
      } catch {
        throw rejected("the receipt is not JSON");
      }
      const binding = checkBinding(receipt, input);
      await runVerifier(ctx, { receipt: file.absolute, target: input.target, root: root.dir });
      return {
        output: {
          schema: EXTERNAL_RECEIPT_VERIFICATION,
          verifier: "scafld",
          verified: true,
          task_id: binding.taskId,
          verdict: binding.verdict,
          target: input.target,
          contract_digest: input.contract_digest,
          receipt_ref: `runx:external_receipt:${receiptDigest}`,
          receipt_digest: receiptDigest,
          verified_at: secondsTimestamp(ctx.now()),
        },
        summary: `external receipt for ${binding.taskId} verified against ${input.target}`,
      };
    },
  }),
  { name: "external_receipt_verification", packet: EXTERNAL_RECEIPT_VERIFICATION },
);
