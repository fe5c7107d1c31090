/**
 * Test kit for agent answers: `answers-review`, a graph whose one step is an agent task that
 * declares its outputs (a required enum `decision` and an optional string `note`). Without a
 * managed agent configured it pauses `needs_agent` for a caller's answer.
 */
import type { Workspace } from "./cli.js";

/** The request id of the review step's agent act. */
export const REVIEW_REQUEST = "agent_task.review-change.output";

/** SKILL.md of `answers-review`. */
export const ANSWERS_REVIEW_SKILL = [
  "---",
  "name: answers-review",
  "description: Ask a reviewer whether a change ships, and record the decision.",
  "---",
  "",
  "Review the change named in `subject` and decide whether it ships.",
  "",
].join("\n");

/** X.yaml of `answers-review`. */
export const ANSWERS_REVIEW_YAML = [
  "runners:",
  "  default:",
  "    default: true",
  "    type: graph",
  "    inputs:",
  "      subject: {type: string, required: true, description: The change to review.}",
  "    graph:",
  "      name: answers-review",
  "      result_from: [review]",
  "      steps:",
  "        - id: review",
  "          instructions: Decide whether the change ships; add a note for the record.",
  "          run:",
  "            type: agent-task",
  "            agent: reviewer",
  "            task: review-change",
  "            outputs:",
  "              decision:",
  "                type: string",
  "                enum: [approve, revise, reject]",
  "                description: Whether the change ships.",
  "              note:",
  "                type: string",
  "                required: false",
  "                description: One line for the record.",
  "          inputs:",
  "            subject: $input.subject",
  "",
].join("\n");

/** Writes `skills/answers-review` into the workspace. */
export function addAnswersReview(ws: Workspace): void {
  ws.write("skills/answers-review/SKILL.md", ANSWERS_REVIEW_SKILL);
  ws.write("skills/answers-review/X.yaml", ANSWERS_REVIEW_YAML);
}
