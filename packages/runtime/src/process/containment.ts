/**
 * Containment of one supervised process tree: everything a run starts must end with it,
 * including processes that leave its process group (`setsid`, double forks, daemons).
 *
 * - **cgroup** (Linux with a writable cgroup v2 hierarchy): every run gets its own cgroup
 *   `runx-<pid>-<thread>-<n>` beside the runtime's own. The child joins it before the skill's
 *   command is executed (a `/bin/sh` prologue writes itself into `cgroup.procs`, then `exec`s
 *   the exact argv), so nothing the command does can start outside it; ending the run writes
 *   `cgroup.kill`, which the kernel applies to every member, and removes the cgroup. A process
 *   cannot leave a cgroup without write access to the hierarchy.
 * - **process tree** (no usable cgroup): the supervisor walks the leader's descendants through
 *   /proc/<pid>/task/<tid>/children while the run lives (every {@link TREE_SCAN_MS}) and when
 *   it ends, stops what it finds, walks again for children forked meanwhile, then SIGKILLs
 *   them all (a pid is only signalled while its start time is the one recorded). A process
 *   whose parent exited between two walks has been re-parented away from the tree and is not
 *   found: this mode bounds, it does not guarantee.
 *
 * docs/security.md has the operator's view: what is contained, and the limits.
 */
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { threadId } from "node:worker_threads";

/** How often the process-tree mode scans for new descendants while a run lives. */
export const TREE_SCAN_MS = 200;
/** The shell that joins a run's cgroup before `exec`ing the command. */
const SHELL = "/bin/sh";
/** Variables the prologue shell may export that were not in the child's environment. */
export const SHELL_VARIABLES = ["PWD", "OLDPWD", "SHLVL", "_"] as const;
/** Exit status of the prologue when the child could not join its cgroup. */
export const CGROUP_JOIN_FAILED_EXIT = 125;

/** Which mechanism contains a run. */
export type ContainmentKind = "cgroup" | "process-tree";

/** The containment of one run's process tree. */
export interface Containment {
  readonly kind: ContainmentKind;
  /** The argv to spawn instead of `command args` (the cgroup prologue), or the same argv. */
  wrap(
    command: string,
    args: readonly string[],
    env: Readonly<Record<string, string>>,
  ): { command: string; args: string[] };
  /** The leader started with this pid. */
  attach(pid: number): void;
  /** Sends `signal` to every process of the run (the leader's group and every escapee). */
  signal(signal: NodeJS.Signals): void;
  /** Kills whatever is left of the run and releases the cgroup (synchronous; idempotent). */
  release(): void;
}

interface CgroupBase {
  /** The runtime's own cgroup directory; run cgroups are created beside it, as its children. */
  dir: string;
}

let cgroupBase: CgroupBase | null | undefined;
let sequence = 0;

/** The cgroup v2 directory this process lives in, when it can be written; null otherwise. */
export function cgroupBaseDir(): string | null {
  if (cgroupBase === undefined) cgroupBase = detectCgroupBase();
  return cgroupBase?.dir ?? null;
}

function detectCgroupBase(): CgroupBase | null {
  if (process.platform !== "linux" || !existsSync(SHELL)) return null;
  try {
    const own = readFileSync("/proc/self/cgroup", "utf8")
      .split("\n")
      .find((line) => line.startsWith("0::"))
      ?.slice(3);
    if (own === undefined) return null;
    for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
      // id parent major:minor root mountpoint options [optional…] - fstype source superoptions
      const [left, right] = line.split(" - ");
      if (right?.startsWith("cgroup2 ") !== true || left === undefined) continue;
      const fields = left.split(" ");
      const root = fields[3] ?? "/";
      const mount = (fields[4] ?? "").replace(/\\040/g, " ");
      if (root !== "/" && own !== root && !own.startsWith(`${root}/`)) continue;
      const inside = root === "/" ? own : own.slice(root.length);
      const dir = join(mount, inside);
      if (!/^[A-Za-z0-9/._-]+$/.test(dir)) return null; // embedded in the prologue unquoted-safe
      accessSync(dir, constants.W_OK);
      return { dir };
    }
  } catch {
    return null;
  }
  return null;
}

/** Forgets the probed cgroup hierarchy (tests switch modes). */
export function resetContainmentProbe(): void {
  cgroupBase = undefined;
}

function tryWrite(file: string, text: string): boolean {
  try {
    writeFileSync(file, text);
    return true;
  } catch {
    return false;
  }
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already (ESRCH) or not ours to signal
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  signalPid(-pgid, signal);
}

function cgroupPids(dir: string): number[] {
  try {
    return readFileSync(join(dir, "cgroup.procs"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map(Number);
  } catch {
    return [];
  }
}

/** Kills every member of a cgroup and removes it; false when it could not be removed yet. */
export function killCgroup(dir: string): boolean {
  if (!tryWrite(join(dir, "cgroup.kill"), "1")) {
    // Kernels before 5.14 have no cgroup.kill: freeze, kill each member, thaw so they die.
    tryWrite(join(dir, "cgroup.freeze"), "1");
    for (const pid of cgroupPids(dir)) signalPid(pid, "SIGKILL");
    tryWrite(join(dir, "cgroup.freeze"), "0");
  }
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/** Removes a killed cgroup once its last member has exited (members die asynchronously). */
function removeWhenEmpty(dir: string, attempts = 100): void {
  if (killCgroup(dir) || attempts <= 0) return;
  setTimeout(() => removeWhenEmpty(dir, attempts - 1), 20).unref();
}

function cgroupContainment(base: string): Containment | null {
  const dir = join(base, `runx-${process.pid}-${threadId}-${++sequence}`);
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") return null;
    // Left by an earlier process that had this pid: it is not ours to keep.
    if (!killCgroup(dir)) return null;
    try {
      mkdirSync(dir);
    } catch {
      return null;
    }
  }
  let leader: number | undefined;
  let released = false;
  return {
    kind: "cgroup",
    wrap(command, args, env) {
      const unset = SHELL_VARIABLES.filter((name) => !(name in env));
      const prologue = [
        `echo 0 >${dir}/cgroup.procs || { echo "runx: cannot join the run's cgroup" >&2; exit ${CGROUP_JOIN_FAILED_EXIT}; }`,
        ...(unset.length > 0 ? [`unset ${unset.join(" ")}`] : []),
        'exec "$@"',
      ].join("\n");
      // `sh -c prologue name cmd args…`: $0 is `name`, "$@" the exact argv (no re-parsing).
      return { command: SHELL, args: ["-c", prologue, "runx-contain", command, ...args] };
    },
    attach(pid) {
      leader = pid;
    },
    signal(signal) {
      if (released) return;
      if (signal === "SIGKILL") {
        tryWrite(join(dir, "cgroup.kill"), "1");
        return;
      }
      // The leader's group first (before the prologue has joined, the group is all there is).
      if (leader !== undefined) signalGroup(leader, signal);
      for (const pid of cgroupPids(dir)) signalPid(pid, signal);
    },
    release() {
      if (released) return;
      released = true;
      if (leader !== undefined) signalGroup(leader, "SIGKILL");
      removeWhenEmpty(dir);
    },
  };
}

/** The start time of a process (field 22 of /proc/<pid>/stat), or undefined once it is gone. */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** The direct children of a process, from each of its threads' /proc children lists. */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tasks) {
    try {
      for (const child of readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ")) {
        if (child !== "" && child !== "\n") out.push(Number(child));
      }
    } catch {
      // the thread ended while we looked
    }
  }
  return out;
}

function treeContainment(): Containment {
  let leader: number | undefined;
  let released = false;
  let timer: NodeJS.Timeout | undefined;
  /** Every descendant seen so far, with its start time (a reused pid is not ours). */
  const known = new Map<number, string>();

  /**
   * Adds every live descendant of the leader and of the processes already known. A process
   * whose parent exited is re-parented away from the tree, so it is found only through a
   * known ancestor; hence the scans while the run lives.
   */
  const scan = (): void => {
    const queue = [...(leader !== undefined ? [leader] : []), ...known.keys()];
    for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
      for (const child of childrenOf(pid)) {
        if (known.has(child)) continue;
        const start = startTime(child);
        if (start === undefined) continue;
        known.set(child, start);
        queue.push(child);
      }
    }
  };

  const live = (): number[] =>
    [...known].filter(([pid, start]) => startTime(pid) === start).map(([pid]) => pid);

  const killTree = (signal: NodeJS.Signals): void => {
    if (leader !== undefined) signalGroup(leader, signal === "SIGKILL" ? "SIGSTOP" : signal);
    scan();
    if (signal !== "SIGKILL") {
      for (const pid of live()) signalPid(pid, signal);
      return;
    }
    // Stop what is found so it cannot fork further, look again, then kill everything found.
    for (let round = 0; round < 8; round++) {
      const before = known.size;
      for (const pid of live()) signalPid(pid, "SIGSTOP");
      scan();
      if (known.size === before) break;
    }
    if (leader !== undefined) signalGroup(leader, "SIGKILL");
    for (const pid of live()) signalPid(pid, "SIGKILL");
  };

  return {
    kind: "process-tree",
    wrap: (command, args) => ({ command, args: [...args] }),
    attach(pid) {
      leader = pid;
      timer = setInterval(scan, TREE_SCAN_MS);
      timer.unref();
    },
    signal(signal) {
      if (!released) killTree(signal);
    },
    release() {
      if (released) return;
      released = true;
      if (timer !== undefined) clearInterval(timer);
      killTree("SIGKILL");
    },
  };
}

/** The containment for a new run: a cgroup where one can be made, else process-tree tracking. */
export function containRun(mode: "auto" | ContainmentKind = "auto"): Containment {
  if (mode !== "process-tree") {
    const base = cgroupBaseDir();
    const cgroup = base === null ? null : cgroupContainment(base);
    if (cgroup !== null) return cgroup;
  }
  return treeContainment();
}

/**
 * Kills and removes run cgroups whose owning process is gone (a runtime that was SIGKILLed
 * cannot clean up after itself), or, with `ownedBy`, every run cgroup of that process.
 * Returns how many were killed. A no-op without a usable cgroup hierarchy.
 */
export function reapRunCgroups(ownedBy?: number): number {
  const base = cgroupBaseDir();
  if (base === null) return 0;
  let reaped = 0;
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return 0;
  }
  for (const name of names) {
    const match = /^runx-(\d+)-\d+-\d+$/.exec(name);
    if (match === null) continue;
    const owner = Number(match[1]);
    if (ownedBy !== undefined ? owner !== ownedBy : ownerAlive(owner)) continue;
    removeWhenEmpty(join(base, name));
    reaped++;
  }
  return reaped;
}

function ownerAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}
