/**
 * `control.capture_harness_context` (scope `runx:control:read`): records the harness, signal
 * and decision packets a run was handed as explicit step output, so later steps and the
 * receipt cite them instead of an agent restating them. Nothing is inferred: absent packets
 * stay absent and `present`/`captured` say whether anything was supplied. The packet is the
 * named output `harness_context` (`runx.control.harness_context.v1`); the supplied packets
 * also stay at the top level, as upstream emits them.
 */
import inputSchema from "../../../schemas/tools/control/capture-harness-context.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/control/capture-harness-context.output.schema.json" with { type: "json" };
import { validateToolsControlCaptureHarnessContextInput } from "../../generated/validate-tools-control-capture-harness-context.input.js";
import { artifactEnvelope } from "../../graph/artifacts.js";
import { defineTool } from "../define-tool.js";
import type { JsonRecord, NativeTool } from "../types.js";

/** `control.capture_harness_context` input after schema validation. */
export interface HarnessContextInput {
  harness?: JsonRecord;
  signal?: JsonRecord;
  decision?: JsonRecord;
}

/** The `control.capture_harness_context` tool. */
export const controlCaptureHarnessContextTool: NativeTool = defineTool<
  HarnessContextInput,
  JsonRecord
>({
  name: "control.capture_harness_context",
  description: "Capture supplied harness, signal, and decision packets as explicit context.",
  mutating: false,
  scopes: ["runx:control:read"],
  inputSchema,
  outputSchema,
  validate: validateToolsControlCaptureHarnessContextInput,
  run(input) {
    const supplied: JsonRecord = {};
    for (const key of ["harness", "signal", "decision"] as const) {
      const packet = input[key];
      if (packet !== undefined) supplied[key] = packet;
    }
    const present = Object.keys(supplied).length > 0;
    return Promise.resolve({
      output: {
        present,
        ...supplied,
        harness_context: artifactEnvelope({ captured: present, ...structuredClone(supplied) }),
      },
      summary: present ? `captured ${Object.keys(supplied).join(", ")}` : "nothing supplied",
    });
  },
});
