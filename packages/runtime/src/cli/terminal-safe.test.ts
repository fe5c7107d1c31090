import { describe, expect, it } from "vitest";
import { styler } from "./render.js";
import { statusLine, terminalSafe } from "./terminal-safe.js";

describe("terminalSafe", () => {
  it("spells out C0 and C1 controls, DEL and bidi controls, and keeps newline and tab", () => {
    expect(terminalSafe("a\u001b]0;t\u0007b\rc\u009bd\u007fe\u202ef\u2066g\n\th")).toBe(
      "a\\u001b]0;t\\u0007b\\u000dc\\u009bd\\u007fe\\u202ef\\u2066g\n\th",
    );
  });

  it("keeps the styler's colour codes and nothing else that starts with ESC", () => {
    const s = styler(true);
    const styled = `${s.ok("ok")} ${s.bad("bad")} ${s.dim("dim")} ${s.bold("bold")}`;
    expect(terminalSafe(styled)).toBe(styled);
    expect(terminalSafe("\u001b[2J\u001b[31;1m")).toBe("\\u001b[2J\\u001b[31;1m");
  });

  it("leaves JSON with the same value", () => {
    const value = { text: "x\u009by\u202ez\u2028" };
    expect(JSON.parse(terminalSafe(JSON.stringify(value)))).toEqual(value);
  });

  it("a status line erases the line itself and makes its text safe", () => {
    expect(statusLine("done \u001b[2J")).toBe("\u001b[2K\rdone \\u001b[2J");
    expect(statusLine("")).toBe("\u001b[2K\r");
  });
});
