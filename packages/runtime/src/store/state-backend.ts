/**
 * Which run state store a runtime uses: the embedded SQLite file (`.runx/state.sqlite`, the
 * default) or, when `RUNX_STATE_URL=postgres://user@host:port/db` is set, one PostgreSQL
 * database shared by several instances (docs/decisions/0010-cluster-state-store.md). The URL
 * is checked here, at start-up, without loading the PostgreSQL driver; its password comes
 * from PGPASSWORD or the file named by RUNX_STATE_PASSWORD_FILE.
 */
import { RuntimeError } from "../errors.js";
import { parseStateUrl } from "./pg/state-url.js";

/** The selected store. `label` is safe to print (no credentials). */
export type StateBackend =
  | { kind: "sqlite" }
  | {
      kind: "postgres";
      url: string;
      label: string;
      password?: string;
      passwordFile?: string;
    };

/** Reads RUNX_STATE_URL; CONFIG_INVALID (naming the variable, never its value) when unusable. */
export function stateBackendFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): StateBackend {
  const url = env.RUNX_STATE_URL?.trim();
  if (url === undefined || url === "") return { kind: "sqlite" };
  const { label } = parseStateUrl(url);
  const passwordFile = env.RUNX_STATE_PASSWORD_FILE?.trim();
  return {
    kind: "postgres",
    url,
    label,
    ...(env.PGPASSWORD !== undefined ? { password: env.PGPASSWORD } : {}),
    ...(passwordFile !== undefined && passwordFile !== "" ? { passwordFile } : {}),
  };
}

/**
 * The refusal of a part of the runtime that still reads the embedded SQLite store only:
 * with RUNX_STATE_URL set it must not quietly write a local file other instances never see.
 */
export function notOnPostgres(label: string, what: string): RuntimeError {
  return new RuntimeError(
    "STORE_ERROR",
    `${label}: ${what} is not available on the PostgreSQL state store yet (RUNX_STATE_URL); unset RUNX_STATE_URL to use .runx/state.sqlite`,
    { label, reason: "not_on_postgres" },
  );
}
