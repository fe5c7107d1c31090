import { describe, expect, it } from "vitest";
import { inlineParts, promptBlocks } from "./prompt-view";

describe("agent instructions as blocks", () => {
  it("reads headings, paragraphs joined across lines, lists and fenced code", () => {
    const text = [
      "# Review",
      "",
      "Read the change and",
      "decide whether it ships.",
      "",
      "- approve when tests pass",
      "- revise when",
      "  something is missing",
      "1. first",
      "2. second",
      "",
      "```json",
      '{"decision": "approve"}',
      "```",
      "## Step instructions",
      "Add a note.",
    ].join("\n");
    expect(promptBlocks(text)).toEqual([
      { kind: "heading", level: 1, text: "Review" },
      { kind: "paragraph", text: "Read the change and decide whether it ships." },
      {
        kind: "list",
        ordered: false,
        items: ["approve when tests pass", "revise when something is missing"],
      },
      { kind: "list", ordered: true, items: ["first", "second"] },
      { kind: "code", text: '{"decision": "approve"}' },
      { kind: "heading", level: 2, text: "Step instructions" },
      { kind: "paragraph", text: "Add a note." },
    ]);
  });

  it("keeps markup as text: nothing is HTML", () => {
    expect(promptBlocks("<script>alert(1)</script>")).toEqual([
      { kind: "paragraph", text: "<script>alert(1)</script>" },
    ]);
  });

  it("splits text at code spans", () => {
    expect(inlineParts("set `decision` to `approve` or not")).toEqual([
      { code: false, text: "set " },
      { code: true, text: "decision" },
      { code: false, text: " to " },
      { code: true, text: "approve" },
      { code: false, text: " or not" },
    ]);
    expect(inlineParts("plain")).toEqual([{ code: false, text: "plain" }]);
  });

  it("marks **strong** and *em* spans, never inside code, and leaves arithmetic alone", () => {
    expect(inlineParts("**read** — `fs.read` loads *the* document")).toEqual([
      { code: false, text: "read", emphasis: "strong" },
      { code: false, text: " — " },
      { code: true, text: "fs.read" },
      { code: false, text: " loads " },
      { code: false, text: "the", emphasis: "em" },
      { code: false, text: " document" },
    ]);
    expect(inlineParts("`**not bold**` and 2 * 3 * 4 and snake_case_name")).toEqual([
      { code: true, text: "**not bold**" },
      { code: false, text: " and 2 * 3 * 4 and snake_case_name" },
    ]);
  });
});
