import { describe, expect, it } from "vitest";
import { parseSkillMarkdown, splitSkillMarkdown } from "./skill-markdown.js";

describe("parseSkillMarkdown", () => {
  it("splits frontmatter from the body and keeps keys runx does not interpret", () => {
    const skill = parseSkillMarkdown(
      "---\nname: demo\ndescription: Demo.\ncategory: '  ops  '\nlinks:\n  source: https://example.test\n---\n\n# Demo\n",
    );
    expect(skill).toMatchObject({
      name: "demo",
      description: "Demo.",
      category: "ops",
      body: "\n# Demo\n",
    });
    expect(skill.frontmatter.links).toEqual({ source: "https://example.test" });
  });

  it("accepts CRLF line endings and a byte-order mark", () => {
    const skill = parseSkillMarkdown("\uFEFF---\r\nname: demo\r\n---\r\nBody\r\n");
    expect(skill.name).toBe("demo");
    expect(skill.body).toBe("Body\r\n");
  });

  it("treats an empty category as absent and extracts the quality profile section", () => {
    const skill = parseSkillMarkdown(
      "---\nname: demo\ncategory: ' '\n---\n# Demo\n## quality profile\nBe exact.\n## Next\nMore.\n",
    );
    expect(skill.category).toBeUndefined();
    expect(skill.qualityProfile).toBe("Be exact.");
  });

  it("locates frontmatter schema errors in SKILL.md coordinates", () => {
    expect(() => parseSkillMarkdown("---\nname: demo\nretry:\n  max_attempts: 0\n---\n")).toThrow(
      expect.objectContaining({
        code: "FRONTMATTER_INVALID",
        details: expect.objectContaining({ line: 4, column: 3, path: "retry.max_attempts" }),
      }),
    );
  });

  it("keeps the raw frontmatter text and leaves schema checks to the validation phase", () => {
    const parts = splitSkillMarkdown("---\nname: 42\nsource:\n  type: agent\n---\n# Body\n");
    expect(parts.rawFrontmatter).toBe("name: 42\nsource:\n  type: agent");
    expect(parts.body).toBe("# Body\n");
    expect(parts.frontmatter).toEqual({ name: 42, source: { type: "agent" } });
    expect(() => parseSkillMarkdown("---\nname: 42\n---\n")).toThrow("must be string");
  });
});
