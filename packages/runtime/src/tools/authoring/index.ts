/**
 * The native skill-authoring tools (runx.skill.inspect, plan, bind, validate, apply), in the
 * order a skill-lab graph calls them.
 */
import type { NativeTool } from "../types.js";
import { skillApplyTool } from "./skill-apply.js";
import { skillBindTool } from "./skill-bind.js";
import { skillInspectTool } from "./skill-inspect.js";
import { skillPlanTool } from "./skill-plan.js";
import { skillValidateTool } from "./skill-validate.js";

export { skillApplyTool, skillBindTool, skillInspectTool, skillPlanTool, skillValidateTool };

/** Every authoring tool. */
export function authoringTools(): NativeTool[] {
  return [skillInspectTool, skillPlanTool, skillBindTool, skillValidateTool, skillApplyTool];
}
