/**
 * Loopback PostgreSQL and Redis for tests: every test run gets its own database / key prefix
 * and removes it afterwards. Endpoints default to 127.0.0.1:5432 (user postgres, database
 * test) and 127.0.0.1:6379; override with RUNX_TEST_PG_URL, RUNX_TEST_PG_USER, RUNX_TEST_REDIS_URL.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { Redis } from "ioredis";

export const PG_URL = process.env.RUNX_TEST_PG_URL ?? "postgres://127.0.0.1:5432/test";
export const PG_USER = process.env.RUNX_TEST_PG_USER ?? "postgres";
export const REDIS_URL = process.env.RUNX_TEST_REDIS_URL ?? "redis://127.0.0.1:6379/0";

function adminClient(): pg.Client {
  const url = new URL(PG_URL);
  return new pg.Client({
    host: url.hostname,
    port: Number(url.port || 5432),
    database: url.pathname.slice(1),
    user: PG_USER,
  });
}

/** Creates a throwaway database; returns its endpoint and a dropper. */
export async function scratchPostgres(): Promise<{ endpoint: string; drop(): Promise<void> }> {
  const name = `runx_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = adminClient();
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    endpoint: url.toString(),
    async drop() {
      const c = adminClient();
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A fresh key prefix with one hash tag; `drop` deletes every key under it. */
export function scratchRedisPrefix(): { prefix: string; drop(): Promise<void> } {
  const tag = `runx-test-${process.pid}-${randomBytes(4).toString("hex")}`;
  const prefix = `runx:{${tag}}`;
  return {
    prefix,
    async drop() {
      const redis = new Redis(REDIS_URL, { lazyConnect: true });
      await redis.connect();
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== "0");
      await redis.quit();
    },
  };
}
