/**
 * Hiding runx's own state from the processes a skill starts. The native tools are fenced off
 * from it by path (tools/runx-state.ts), but a cli-tool, `command.execute` or the javascript
 * host is a process of the operator's OS user and could otherwise read `.runx/state.sqlite`
 * or `$RUNX_HOME/keys` by any path it likes. Where the host allows it, the process starts in
 * private mount and pid namespaces with their own /proc (`unshare --mount --pid --fork
 * --mount-proc`, found by absolute path) in which every existing state root directory is
 * covered by an empty read-only tmpfs before the exact argv is `exec`ed, so no path form
 * (relative, absolute, symlink, `/proc/self/root`, `/proc/<runtime pid>/root` or `/fd`)
 * reaches what is underneath. The command is the pid namespace's init: a signal from outside
 * reaches it only if it handles that signal, so a run's SIGTERM may end only with the SIGKILL
 * after the grace period. The skill's own package, when it lies under a state root (a
 * registry package materialised under `.runx/`), is bound back read-only at its path.
 *
 * Availability is probed once per process (one short spawn that mounts a tmpfs in a throwaway
 * namespace); without it (not Linux, no `unshare`/`mount`, neither root nor unprivileged user
 * namespaces) runs go on as before and report `stateIsolation: "none"`. A cover that fails at
 * run time after a successful probe fails the run (exit {@link STATE_COVER_FAILED_EXIT})
 * rather than running it uncovered. docs/security.md has the operator's view.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { resolve, sep } from "node:path";
import { SHELL_VARIABLES } from "./containment.js";

/** Exit status of the prologue when the state could not be covered. */
export const STATE_COVER_FAILED_EXIT = 126;
/** Where the namespace tools are looked for; never through the skill's PATH. */
const UNSHARE_CANDIDATES = ["/usr/bin/unshare", "/bin/unshare"] as const;
const MOUNT_CANDIDATES = ["/usr/bin/mount", "/bin/mount"] as const;
const MKDIR_CANDIDATES = ["/usr/bin/mkdir", "/bin/mkdir"] as const;

/** How a supervised process was kept from runx's own state. */
export type StateIsolation = "mount-namespace" | "none";

/** What a supervised process must not see, and what it must still see. */
export interface StateCoverRequest {
  /** runx's state roots (tools/runx-state.ts `stateRootsOf`); missing ones are ignored. */
  roots: readonly string[];
  /** The workspace: a root that holds it is not covered (the tool fence skips it too). */
  workspaceRoot: string;
  /** Directories the process needs (its package, its runtime) bound back read-only. */
  keep: readonly string[];
}

/** One state root to cover and the directories under it to bind back. */
export interface CoverEntry {
  root: string;
  keep: string[];
}

interface Launcher {
  /** The argv prefix that starts the rest in private mount and pid namespaces. */
  prefix: string[];
  mount: string;
  mkdir: string;
}

let launcher: Launcher | null | undefined;

function inside(root: string, candidate: string): boolean {
  const prefix = root.endsWith(sep) ? root : `${root}${sep}`;
  return candidate === root || candidate.startsWith(prefix);
}

function canonicalDir(path: string): string | undefined {
  try {
    const real = realpathSync.native(path);
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Quotes `text` for a POSIX shell (single quotes; an embedded quote closes and reopens). */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The roots to cover: canonical existing directories, outermost only, none holding the
 * workspace, none that is itself a directory to keep; each with the kept directories under it.
 */
export function planStateCover(request: StateCoverRequest): CoverEntry[] {
  const workspace = canonicalDir(request.workspaceRoot) ?? resolve(request.workspaceRoot);
  const keep = request.keep.flatMap((dir) => canonicalDir(dir) ?? []);
  const roots = [
    ...new Set(request.roots.flatMap((root) => canonicalDir(resolve(root)) ?? [])),
  ].sort((a, b) => a.length - b.length);
  const chosen: CoverEntry[] = [];
  for (const root of roots) {
    if (inside(root, workspace) || keep.includes(root)) continue;
    if (chosen.some((entry) => inside(entry.root, root))) continue;
    chosen.push({ root, keep: keep.filter((dir) => inside(root, dir) && dir !== root) });
  }
  return chosen;
}

/**
 * Shell lines that cover each entry, then re-enter `cwd` by its path: a working directory
 * under a covered root still points into what is underneath, and `..` from it would walk
 * there. A kept directory is opened before its root is covered and bound back from that
 * descriptor (`--no-canonicalize`: mount would otherwise resolve /proc/self/fd/N to the path,
 * which by then is the empty tmpfs).
 */
export function coverLines(
  entries: readonly CoverEntry[],
  cwd: string,
  tools: { mount: string; mkdir: string },
): string[] {
  const fail = `{ echo "runx: cannot hide runx's own state from this process" >&2; exit ${STATE_COVER_FAILED_EXIT}; }`;
  const m = shellQuote(tools.mount);
  const lines: string[] = [];
  for (const { root, keep } of entries) {
    const r = shellQuote(root);
    if (keep.length === 0) {
      lines.push(
        `${m} -t tmpfs -o ro,nosuid,nodev,noexec,size=4k,mode=000 runx-state ${r} || ${fail}`,
      );
      continue;
    }
    // Traversable (mode 111) but not listable, so a kept package is reachable as any user.
    keep.forEach((dir, i) => lines.push(`exec ${i + 3}<${shellQuote(dir)} || ${fail}`));
    lines.push(`${m} -t tmpfs -o nosuid,nodev,noexec,size=4k,mode=111 runx-state ${r} || ${fail}`);
    keep.forEach((dir, i) => {
      const d = shellQuote(dir);
      lines.push(
        `${shellQuote(tools.mkdir)} -p ${d} && ${m} --no-canonicalize --bind /proc/self/fd/${i + 3} ${d} && ${m} --no-canonicalize -o remount,bind,ro ${d} || ${fail}`,
        `exec ${i + 3}<&-`,
      );
    });
    lines.push(`${m} --no-canonicalize -o remount,bind,ro ${r} || ${fail}`);
  }
  if (entries.length > 0) lines.push(`cd ${shellQuote(cwd)} || ${fail}`);
  return lines;
}

function firstExisting(candidates: readonly string[]): string | undefined {
  return candidates.find((path) => existsSync(path));
}

/**
 * Runs a probe's argv with an empty environment and answers whether it exited 0. Supplied by
 * the supervisor (process/supervise.ts), the one module that starts processes.
 */
export type ProbeRunner = (argv: readonly string[]) => boolean;

/** Starts the probe's namespace and mounts a read-only tmpfs in it; true when that worked. */
function probe(prefix: readonly string[], mount: string, run: ProbeRunner): boolean {
  // Any directory will do: the mount lives and dies in the probe's private namespace.
  const dir = existsSync("/tmp") ? "/tmp" : "/";
  return run([
    ...prefix,
    "/bin/sh",
    "-c",
    `${shellQuote(mount)} -t tmpfs -o ro,size=4k,mode=000 runx-probe ${shellQuote(dir)}`,
  ]);
}

function detectLauncher(run: ProbeRunner): Launcher | null {
  if (process.platform !== "linux" || !existsSync("/bin/sh")) return null;
  const unshare = firstExisting(UNSHARE_CANDIDATES);
  const mount = firstExisting(MOUNT_CANDIDATES);
  const mkdir = firstExisting(MKDIR_CANDIDATES);
  if (unshare === undefined || mount === undefined || mkdir === undefined) return null;
  // A pid namespace too, with its own /proc: otherwise /proc/<pid>/root and /proc/<pid>/fd of
  // any process of the same user outside (the runtime itself) lead back to the uncovered
  // state. The command becomes the namespace's init; when it exits, the kernel kills what is
  // left in the namespace. `--kill-child`: should unshare die, its child dies with it.
  const plain = [
    unshare,
    "--mount",
    "--propagation",
    "private",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
  ];
  // Without root, an unprivileged user namespace (same uid inside) may allow the mounts.
  const variants =
    process.getuid?.() === 0
      ? [plain]
      : [[unshare, "--user", "--map-current-user", ...plain.slice(1)]];
  for (const prefix of variants) if (probe(prefix, mount, run)) return { prefix, mount, mkdir };
  return null;
}

/** Whether skill processes can be kept from runx's state on this host (probed once). */
export function stateCoverAvailable(run: ProbeRunner): boolean {
  if (launcher === undefined) launcher = detectLauncher(run);
  return launcher !== null;
}

/** Forgets the probe; `force` pins the answer (tests of the fallback). */
export function resetStateCoverProbe(force?: "unavailable"): void {
  launcher = force === "unavailable" ? null : undefined;
}

/**
 * The argv that runs `command args` with runx's state covered: `unshare … /bin/sh -c <cover
 * lines> runx-hide command args…`, whose last line `exec`s the exact argv ("$@", no
 * re-parsing) in the environment it was given (the variables the shell adds are unset again).
 * Undefined when the host cannot cover: the process runs as before, `stateIsolation: "none"`.
 */
export function coveredArgv(
  request: StateCoverRequest,
  cwd: string,
  command: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  run: ProbeRunner,
): { command: string; args: string[] } | undefined {
  if (!stateCoverAvailable(run) || launcher === null || launcher === undefined) return undefined;
  const lines = coverLines(planStateCover(request), resolve(cwd), launcher);
  const unset = SHELL_VARIABLES.filter((name) => !(name in env));
  const script = [...lines, ...(unset.length > 0 ? [`unset ${unset.join(" ")}`] : []), 'exec "$@"'];
  const [head, ...rest] = launcher.prefix;
  return {
    command: head as string,
    args: [...rest, "/bin/sh", "-c", script.join("\n"), "runx-hide", command, ...args],
  };
}
