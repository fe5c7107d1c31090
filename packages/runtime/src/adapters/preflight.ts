/**
 * Preflight checks run right before spawn: the isolated
 * worktree and its branch and base commit, then the tool probe. Commands go through an
 * injected runner so the whole gate can be tested without git or the tool installed; the
 * default runner lives with the launch (launch.ts), the adapter subsystem's one module that
 * starts processes.
 */
import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { isProtectedBranch, normalizeBranch } from "./definition.js";
import type { AdapterDefinition } from "./definition.js";
import { commandLabel, isInside } from "./fs-safety.js";
import type { WorkPacket } from "./packet.js";
import { matchedVersionText, parseToolVersion, versionAtLeast } from "./version.js";
import type { FailureCode } from "./vocabulary.js";

/**
 * Runs one probe command; resolves with its exit code, stdout and (when the runner captures
 * it) stderr, or null when it cannot start. Git facts are read from stdout; a tool's version
 * from stdout, then stderr (`java -version` prints it there).
 */
export type ProbeRunner = (
  argv: readonly string[],
  cwd: string,
) => Promise<{ exitCode: number | null; stdout: string; stderr?: string } | null>;

/** How much of each stream the version probe looks at. */
export const PROBE_SCAN_BYTES = 64 * 1024;

/** A preflight refusal. */
export interface PreflightProblem {
  code: FailureCode;
  message: string;
}

/** What the workspace looked like at preflight. */
export interface WorkspaceFacts {
  worktreePath: string | null;
}

/** Checks the worktree, branch and base commit; returns the worktree's absolute path. */
export async function checkWorkspace(opts: {
  root: string;
  packet: WorkPacket;
  definition: AdapterDefinition;
  required: boolean;
  run: ProbeRunner;
}): Promise<PreflightProblem | WorkspaceFacts> {
  const { packet, definition } = opts;
  if (!opts.required) return { worktreePath: null };
  const ref = packet.workspace.worktree_ref;
  if (ref === null || ref === "")
    return {
      code: "missing_worktree",
      message: "a write-capable dispatch needs an isolated worktree (workspace.worktree)",
    };
  const path = resolve(opts.root, ref);
  if (!existsSync(path))
    return { code: "missing_worktree", message: `worktree ${ref} does not exist` };
  const real = realpathSync(path);
  const rootReal = realpathSync(opts.root);
  if (isInside(rootReal, real) || isInside(real, rootReal)) {
    return {
      code: "worktree_not_isolated",
      message: `worktree ${ref} is the primary checkout or nested in it`,
    };
  }
  const top = await opts.run(
    ["git", "rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir"],
    real,
  );
  const lines = top?.exitCode === 0 ? top.stdout.trim().split("\n") : [];
  if (
    lines.length < 3 ||
    realpathSync(lines[0] ?? "/") !== real ||
    resolve(real, lines[1] ?? "") === resolve(real, lines[2] ?? "")
  ) {
    return {
      code: "worktree_not_isolated",
      message: `worktree ${ref} is not a linked git worktree of its own`,
    };
  }
  const wanted = packet.workspace.branch;
  if (wanted === null || wanted === "")
    return { code: "branch_mismatch", message: "the packet names no branch for the worktree" };
  if (isProtectedBranch(wanted, definition.workspace.protected_branches)) {
    return { code: "protected_branch", message: `branch ${normalizeBranch(wanted)} is protected` };
  }
  const prefixes = definition.workspace.branch_prefixes;
  if (prefixes.length > 0 && !prefixes.some((p) => normalizeBranch(wanted).startsWith(p))) {
    return {
      code: "protected_branch",
      message: `branch ${normalizeBranch(wanted)} does not start with an allowed prefix`,
    };
  }
  const head = await opts.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], real);
  if (head?.exitCode !== 0)
    return {
      code: "branch_mismatch",
      message: "git could not read the worktree's branch (check failed)",
    };
  if (head.stdout.trim() !== normalizeBranch(wanted)) {
    return {
      code: "branch_mismatch",
      message: `the worktree is on ${head.stdout.trim()}, not ${normalizeBranch(wanted)}`,
    };
  }
  if (packet.workspace.base_commit !== null) {
    const commit = await opts.run(["git", "rev-parse", "HEAD"], real);
    if (commit?.exitCode !== 0 || commit.stdout.trim() !== packet.workspace.base_commit) {
      return {
        code: "base_commit_mismatch",
        message: "the worktree's HEAD is not the packet's base commit",
      };
    }
  }
  return { worktreePath: real };
}

/** The tool probe's record for the receipt. */
export interface ProbeRecord {
  argv: string[];
  detected_version: string | null;
  min_version: string;
  ok: boolean;
}

/** Runs the tool probe: the binary exists, its version parses, is new enough and not a prerelease. */
export async function probeTool(
  definition: AdapterDefinition,
  cwd: string,
  run: ProbeRunner,
): Promise<{ record: ProbeRecord | null; problem?: PreflightProblem }> {
  const probe = definition.tool_probe;
  if (probe === null) return { record: null };
  const tool = commandLabel(probe.argv[0] ?? "");
  const record: ProbeRecord = {
    argv: probe.argv.map((arg, i) => (i === 0 ? tool : arg)),
    detected_version: null,
    min_version: probe.min_version,
    ok: false,
  };
  const result = await run(probe.argv, cwd);
  if (result === null)
    return {
      record,
      problem: { code: "missing_tool", message: `${tool} is not installed` },
    };
  const text =
    versionIn(probe.version_regex, result.stdout) ??
    versionIn(probe.version_regex, result.stderr ?? "");
  const version = text !== undefined ? parseToolVersion(text) : undefined;
  const minimum = parseToolVersion(probe.min_version);
  if (
    result.exitCode !== 0 ||
    text === undefined ||
    version === undefined ||
    minimum === undefined
  ) {
    return {
      record,
      problem: {
        code: "tool_version_unsupported",
        message: `the version of ${tool} could not be read`,
      },
    };
  }
  record.detected_version = text;
  if (version.prerelease && !probe.allow_prerelease) {
    return {
      record,
      problem: { code: "tool_version_unsupported", message: `${text} is a prerelease` },
    };
  }
  if (!versionAtLeast(version, minimum)) {
    return {
      record,
      problem: {
        code: "tool_version_unsupported",
        message: `${text} is older than ${probe.min_version}`,
      },
    };
  }
  record.ok = true;
  return { record };
}

/** The version `regex` finds in the first PROBE_SCAN_BYTES of `output`, or undefined. */
function versionIn(regex: string, output: string): string | undefined {
  const bounded = Buffer.from(output, "utf8").subarray(0, PROBE_SCAN_BYTES).toString("utf8");
  return matchedVersionText(bounded, new RegExp(regex).exec(bounded));
}
