/**
 * Parsing `RUNX_STATE_URL` (kept apart from ./connect.ts so that the composition root can
 * check the setting at start-up without loading the PostgreSQL driver). A URL carrying a
 * password is refused: passwords come only from PGPASSWORD or a file, so they never sit in a
 * URL that ends up in process listings or logs. Messages never repeat the URL.
 */
import type pg from "pg";
import { RuntimeError } from "../../errors.js";

/** The connection settings of a state URL; refuses a password in the URL. */
export function parseStateUrl(
  url: string,
  password?: string,
): { config: pg.ClientConfig; label: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RuntimeError("CONFIG_INVALID", "RUNX_STATE_URL is not a URL", {
      field: "RUNX_STATE_URL",
    });
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new RuntimeError("CONFIG_INVALID", "RUNX_STATE_URL must start with postgres://", {
      field: "RUNX_STATE_URL",
    });
  }
  if (parsed.password !== "") {
    throw new RuntimeError(
      "CONFIG_INVALID",
      "RUNX_STATE_URL must not contain a password; set PGPASSWORD or a password file",
      { field: "RUNX_STATE_URL" },
    );
  }
  const database = decodeURIComponent(parsed.pathname.slice(1));
  if (database === "" || database.includes("/")) {
    throw new RuntimeError("CONFIG_INVALID", "RUNX_STATE_URL must name one database", {
      field: "RUNX_STATE_URL",
    });
  }
  const port = Number(parsed.port || 5432);
  const config: pg.ClientConfig = {
    host: decodeURIComponent(parsed.hostname),
    port,
    database,
    ...(parsed.username !== "" ? { user: decodeURIComponent(parsed.username) } : {}),
    ...(password !== undefined ? { password } : {}),
  };
  return { config, label: `postgres://${parsed.hostname}:${port}/${database}` };
}
