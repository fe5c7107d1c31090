import { describe, expect, it } from "vitest";
import { matchedVersionText, parseToolVersion, versionAtLeast } from "./version.js";

describe("tool versions (D.22)", () => {
  it.each([
    ["1.2.3", [1, 2, 3], false],
    ["v22", [22, 0, 0], false],
    ["1.2.3+build.5", [1, 2, 3], false],
    ["1.2.3.4", [1, 2, 3], false],
    ["1.2.3,", [1, 2, 3], false],
    ["1.2.3-rc.1", [1, 2, 3], true],
    ["1.2.3rc1", [1, 2, 3], true],
    ["1.2.3b2", [1, 2, 3], true],
    ["1.2.3.dev0", [1, 2, 3], true],
    ["1.2.3-nightly", [1, 2, 3], true],
  ])("%s", (text, parts, prerelease) => {
    expect(parseToolVersion(text)).toEqual({ parts, prerelease });
  });

  it("refuses text that does not start with a version", () => {
    expect(parseToolVersion("latest")).toBeUndefined();
    expect(parseToolVersion("")).toBeUndefined();
  });

  it("compares the numeric core", () => {
    const v = (t: string) => parseToolVersion(t)!;
    expect(versionAtLeast(v("18.0.0"), v("18.0.0"))).toBe(true);
    expect(versionAtLeast(v("18.0.1"), v("18.0.0"))).toBe(true);
    expect(versionAtLeast(v("17.99.99"), v("18.0.0"))).toBe(false);
    expect(versionAtLeast(v("18.10.0"), v("18.9.0"))).toBe(true);
  });

  it("keeps a suffix attached to the regex capture, so a prerelease is not read as a release", () => {
    const at = (stdout: string) => matchedVersionText(stdout, /v(\d+\.\d+\.\d+)/.exec(stdout));
    expect(at("node v22.1.0-rc.1\n")).toBe("22.1.0-rc.1");
    expect(at("tool v0.17.3rc1 (x)")).toBe("0.17.3rc1");
    expect(at("v1.2.3.\n")).toBe("1.2.3");
    expect(at("v1.2.3 built today")).toBe("1.2.3");
    expect(at("no version")).toBeUndefined();
  });
});
