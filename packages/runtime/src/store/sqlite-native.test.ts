import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nativeBindingPath, openSqliteDatabase } from "./sqlite-native.js";

describe("better-sqlite3 addon", () => {
  const dir = mkdtempSync(join(tmpdir(), "runx-sqlite-native-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("is found in the node_modules above this module", () => {
    const path = nativeBindingPath();
    expect(basename(path)).toBe("better_sqlite3.node");
    expect(existsSync(path)).toBe(true);
  });

  it("is found through Node's resolver when no node_modules lies above the start", () => {
    // A scratch folder has no node_modules above it: the lookup falls back to the resolver.
    expect(nativeBindingPath(dir)).toBe(nativeBindingPath());
  });

  it("opens databases over the once-loaded addon", () => {
    const db = openSqliteDatabase(join(dir, "a.sqlite"));
    expect(db.prepare("SELECT 41 + 1 AS n").get()).toEqual({ n: 42 });
    db.close();
  });
});
