/**
 * The native tool catalog: lookup by exact name, summaries for `runx tool list`, and the
 * contract view for `runx tool inspect` (the same schemas managed agents are offered).
 */
import { RuntimeError } from "../errors.js";
import { artifactAdmitTool } from "./artifact/admit.js";
import { artifactReadTool } from "./artifact/read.js";
import { commandExecuteTool } from "./command/command-execute.js";
import { dataCompareTool, dataDigestTool } from "./data/digest.js";
import { controlPrepareHandoffTool } from "./control/control-prepare-handoff.js";
import { dataTools } from "./data/data-tools.js";
import { evidenceTools } from "./evidence/index.js";
import { gitTools } from "./git/git-tools.js";
import { cliCaptureHelpTool } from "./cli/capture-help.js";
import { commandPlanTool } from "./command/plan.js";
import { controlCaptureHarnessContextTool } from "./control/capture-harness-context.js";
import { sandboxPlanTool } from "./sandbox/plan.js";
import { policyLintTool } from "./policy/lint-tool.js";
import { fsApplyBundleTool } from "./fs/apply-bundle.js";
import { fsReadBundleTool } from "./fs/read-bundle.js";
import { fsReadTool } from "./fs/read.js";
import { fsWriteTool } from "./fs/write.js";
import { paymentTools } from "./payment/tools.js";
import { paymentChargeTools } from "./payment/charge.js";
import { paymentRefundPlanTool } from "./payment/refund-plan.js";
import { x402Tools } from "./payment/x402.js";
import { paymentRefundAdmitTool } from "./payment/refund-admit.js";
import { receiptAttestTool } from "./receipt/receipt-attest.js";
import { authoringTools } from "./authoring/index.js";
import { receiptVerifyTool } from "./receipt/receipt-verify.js";
import { externalReceiptVerifyTool } from "./receipt/external-receipt.js";
import { receiptTools } from "./receipt/index.js";
import type { JsonRecord, NativeTool } from "./types.js";

/** One line of `runx tool list`. */
export interface ToolSummary {
  name: string;
  description: string;
  mutating: boolean;
  scopes: string[];
}

/** The contract of one tool, as `runx tool inspect` shows it. */
export interface ToolInspection extends ToolSummary {
  input_schema: JsonRecord;
  output_schema: JsonRecord;
}

/** A fixed set of native tools. */
export interface ToolCatalog {
  /** Every tool, sorted by name. */
  list(): ToolSummary[];
  get(name: string): NativeTool | undefined;
  /** Throws TOOL_NOT_FOUND for a name the catalog does not hold. */
  inspect(name: string): ToolInspection;
}

/** The native tools this runtime ships, in catalog order. */
export function builtinTools(): NativeTool[] {
  return [
    fsReadTool,
    fsReadBundleTool,
    fsWriteTool,
    fsApplyBundleTool,
    commandExecuteTool,
    artifactAdmitTool,
    artifactReadTool,
    dataDigestTool,
    dataCompareTool,
    controlPrepareHandoffTool,
    receiptAttestTool,
    ...authoringTools(),
    receiptVerifyTool,
    externalReceiptVerifyTool,
    ...receiptTools(),
    ...paymentTools(),
    ...paymentChargeTools(),
    paymentRefundPlanTool,
    paymentRefundAdmitTool,
    ...x402Tools(),
    ...dataTools(),
    ...evidenceTools(),
    ...gitTools(),
    cliCaptureHelpTool,
    commandPlanTool,
    controlCaptureHarnessContextTool,
    sandboxPlanTool,
    policyLintTool,
  ];
}

function summarize(tool: NativeTool): ToolSummary {
  return {
    name: tool.name,
    description: tool.description,
    mutating: tool.mutating,
    scopes: [...tool.scopes],
  };
}

/** Builds a catalog; two tools with one name are a programming error (INTERNAL). */
export function createToolCatalog(tools: readonly NativeTool[]): ToolCatalog {
  const byName = new Map<string, NativeTool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) {
      throw new RuntimeError("INTERNAL", `native tool ${tool.name} is registered twice`);
    }
    byName.set(tool.name, tool);
  }
  const sorted = [...byName.values()].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return {
    list: () => sorted.map(summarize),
    get: (name) => byName.get(name),
    inspect(name) {
      const tool = byName.get(name);
      if (tool === undefined) {
        throw new RuntimeError("TOOL_NOT_FOUND", `no native tool named ${JSON.stringify(name)}`, {
          tool: name,
        });
      }
      return {
        ...summarize(tool),
        input_schema: tool.inputSchema,
        output_schema: tool.outputSchema,
      };
    },
  };
}
