/** Where the local registry lives (kept apart from the registry itself so that a run resolves it cheaply). */
import path from "node:path";
import { RuntimeError } from "../errors.js";

/**
 * The registry root: `--registry-dir`/`--registry <path|file://…>` > RUNX_REGISTRY_DIR >
 * `$RUNX_HOME/registry`. Remote (http/https) registries are refused: this runtime has no
 * network registry client.
 */
export function registryRoot(options: {
  explicit?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  runxHome: string;
  workspaceRoot: string;
}): string {
  const fromEnv = options.env.RUNX_REGISTRY_DIR?.trim();
  const chosen =
    options.explicit !== undefined && options.explicit !== ""
      ? options.explicit
      : fromEnv !== undefined && fromEnv !== ""
        ? fromEnv
        : undefined;
  if (chosen === undefined) return path.join(options.runxHome, "registry");
  if (/^https?:\/\//i.test(chosen)) {
    throw new RuntimeError(
      "USAGE",
      "remote registries are not supported by this runtime; use a local registry directory (--registry-dir or RUNX_REGISTRY_DIR)",
    );
  }
  const local = chosen.startsWith("file://") ? new URL(chosen).pathname : chosen;
  return path.resolve(options.workspaceRoot, local);
}
