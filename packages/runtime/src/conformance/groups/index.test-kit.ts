/** Which replayer handles which `replay` kind of the corpus table. */
import type { Replayer } from "../corpus.test-kit.js";
import { replayFlows } from "./flows.test-kit.js";
import { replayGraphWrapper } from "./graph-wrapper.test-kit.js";
import { replayHarness } from "./harness.test-kit.js";
import { replayKernelEval } from "./kernel-eval.test-kit.js";
import { replayParserEval } from "./parser-eval.test-kit.js";
import { replayReceipts } from "./receipts.test-kit.js";
import { replayToolOracle } from "./tool-oracle.test-kit.js";

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
