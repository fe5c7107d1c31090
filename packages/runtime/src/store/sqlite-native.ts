/**
 * Opens better-sqlite3 databases with its native addon loaded once, by path, through
 * `process.dlopen`. The CLI bundles better-sqlite3's JavaScript; handing it the loaded addon
 * spares every command Node's module resolution of the addon (realpath, package scope lookups)
 * on top of the lookup below.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";

const ADDON = join("node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");

/**
 * The addon's file: the nearest `node_modules/better-sqlite3` above `from` (by default this
 * module's folder: the lookup Node's resolver would make first), else wherever the resolver
 * finds the package from this module (NODE_PATH, global folders).
 */
export function nativeBindingPath(from = import.meta.dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, ADDON);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  // node:module only here (it loads Node's ES module loader): the lookup above finds the addon
  // in every ordinary installation.
  const { createRequire } = process.getBuiltinModule("node:module");
  const pkg = createRequire(import.meta.url).resolve("better-sqlite3/package.json");
  return join(dirname(pkg), "build", "Release", "better_sqlite3.node");
}

let addon: object | undefined;

/** The loaded addon (loaded on first use). */
function nativeAddon(): object {
  if (addon === undefined) {
    const module = { exports: {} };
    process.dlopen(module, nativeBindingPath());
    addon = module.exports;
  }
  return addon;
}

/** `new Database(path, options)` over the once-loaded addon. */
export function openSqliteDatabase(
  path: string,
  options: Omit<Database.Options, "nativeBinding"> = {},
): Database.Database {
  // better-sqlite3 takes the addon object itself as `nativeBinding` (lib/database.js: a
  // string is required as a path, an object is used as the addon); its type declarations
  // only list the string form.
  return new Database(path, { ...options, nativeBinding: nativeAddon() as unknown as string });
}
