import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeError } from "../../errors.js";
import { readMigrations, resolveMigrationsDir } from "../migrations.js";
import { openPgState, parseStateUrl } from "./connect.js";
import type { PgState } from "./connect.js";
import { applyPgMigrations } from "./migrate.js";
import { scratchPgState } from "./test-kit.js";
import type { ScratchPgState } from "./test-kit.js";

let scratch: ScratchPgState;
beforeAll(async () => {
  scratch = await scratchPgState();
}, 60_000);
afterAll(async () => {
  await scratch.drop();
}, 60_000);

function refusal(fn: () => unknown): RuntimeError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RuntimeError) return err;
    throw err;
  }
  throw new Error("expected a RuntimeError");
}

describe("opening the PostgreSQL state store", () => {
  it("migrates once when several instances open a fresh database at the same time", async () => {
    const states: PgState[] = await Promise.all(Array.from({ length: 4 }, () => scratch.open(2)));
    const first = states[0] as PgState;
    const applied = await first.pool.query<{ hash: string; created_at: string }>(
      "SELECT hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id",
    );
    const files = readMigrations(resolveMigrationsDir(undefined, "test", "drizzle-pg"));
    expect(applied.rows.map((r) => [r.hash, Number(r.created_at)])).toEqual(
      files.map((f) => [f.hash, f.folderMillis]),
    );
    expect(await applyPgMigrations(first.pool, { label: first.label })).toEqual({ applied: 0 });
    const tables = await first.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
    );
    expect(tables.rows[0]?.n).toBe(11);
    expect(first.label).toMatch(/^postgres:\/\/127\.0\.0\.1:5432\/runx_test_/);
  });

  it("refuses a password inside the URL without repeating it", () => {
    const err = refusal(() => parseStateUrl("postgres://runx:hunter2-secret@db:5432/runx"));
    expect(err.code).toBe("CONFIG_INVALID");
    expect(err.details.field).toBe("RUNX_STATE_URL");
    expect(JSON.stringify(err.toJSON())).not.toContain("hunter2");
  });

  it("refuses URLs that are not one PostgreSQL database", () => {
    for (const url of [
      "not a url",
      "mysql://db/runx",
      "postgres://db:5432/",
      "postgres://db/a/b",
    ]) {
      expect(refusal(() => parseStateUrl(url)).code).toBe("CONFIG_INVALID");
    }
  });

  it("takes the password from a file, and names the setting when the file is missing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "runx-pg-password-"));
    try {
      const file = join(dir, "password");
      writeFileSync(file, "file-secret\n", { mode: 0o600 });
      // Trust authentication ignores the password: the pool opens and carries the file's value.
      const state = await openPgState({ url: scratch.url, passwordFile: file, max: 1 });
      expect(state.config.password).toBe("file-secret");
      await state.close();
      const missing = openPgState({ url: scratch.url, passwordFile: join(dir, "absent") });
      await expect(missing).rejects.toMatchObject({
        code: "CONFIG_INVALID",
        details: { field: "RUNX_STATE_PASSWORD_FILE", errno: "ENOENT" },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reports an unreachable database as a STORE_ERROR naming the store by its label", async () => {
    const failed = openPgState({ url: "postgres://runx@127.0.0.1:1/runx", password: "pw-secret" });
    const err = await failed.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RuntimeError);
    expect((err as RuntimeError).code).toBe("STORE_ERROR");
    expect((err as RuntimeError).message).toContain("postgres://127.0.0.1:1/runx");
    expect(JSON.stringify((err as RuntimeError).toJSON())).not.toContain("pw-secret");
  });
});
