/** Which replayer handles which `replay` kind of the corpus table. */
import type { Replayer } from "../corpus.js";
import { replayFlows } from "./flows.js";
import { replayGraphWrapper } from "./graph-wrapper.js";
import { replayHarness } from "./harness.js";
import { replayKernelEval } from "./kernel-eval.js";
import { replayParserEval } from "./parser-eval.js";
import { replayReceipts } from "./receipts.js";
import { replayToolOracle } from "./tool-oracle.js";

/** Replay kind → replayer. Several kinds may share one replayer (it gets all their rows). */
export const REPLAYERS: Record<string, Replayer> = {
  "harness-pkg": replayHarness,
  "harness-file": replayHarness,
  "kernel-eval": replayKernelEval,
  "parser-eval": replayParserEval,
  "graph-wrapper": replayGraphWrapper,
  "graph-not-closed": replayGraphWrapper,
  "tool-oracle": replayToolOracle,
  "verify-spine": replayReceipts,
  "verify-receipt": replayReceipts,
  "c14n-stable": replayReceipts,
  "c14n-receipt": replayReceipts,
  "receipt-oracle": replayReceipts,
  "harness-report": replayReceipts,
  "flow-agent-resume": replayFlows,
  "flow-approval-resume": replayFlows,
};
