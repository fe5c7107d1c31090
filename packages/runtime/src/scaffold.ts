/**
 * `runx new`: checks the request (name, objective, target) and, without an objective, writes
 * a fixed starting package (SKILL.md + X.yaml) into the workspace. With an objective the CLI
 * runs the bundled skill-lab package instead (`officialSkillDir`), whose agent acts propose
 * the package and whose native authoring tools write it.
 *
 * The fixed package is declarative on purpose: its one graph runner hands the operator's `message`
 * to the native `data.digest` tool, so it runs, harnesses and seals a receipt with no package
 * code, no network and no credentials. The objective becomes the package's description and
 * the first paragraph of its manual, which the author then replaces with the real procedure.
 *
 * Containment: the target directory must resolve inside the workspace (lexically and after
 * following symlinks of existing ancestors), may not itself be a symlink, and must be absent
 * or an empty directory. Nothing is written until every check has passed.
 */
import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, realpath, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { RuntimeError } from "./errors.js";

/** What `runx new` is asked for. */
export interface NewSkillOptions {
  /** The package name as typed; refused unless it is already a valid package name. */
  name: string;
  /** What the skill is for; absent for the fixed starting package. */
  objective?: string;
  /** Workspace root (absolute). */
  workspaceRoot: string;
  /** Target directory; relative paths start at the workspace. Default `<workspace>/<name>`. */
  directory?: string;
}

/** What `runx new` created. */
export interface NewSkillResult {
  name: string;
  /** Absolute directory of the new package. */
  directory: string;
  /** Package-relative paths of the files written, in write order. */
  files: string[];
  next_steps: string[];
}

const NAME_PATTERN = /^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$/;
const NAME_MAX = 64;
const OBJECTIVE_MAX = 1000;

/** The form upstream would coerce `value` to: lowercase, runs of other characters as `-`. */
export function suggestedPackageName(value: string): string {
  const replaced = value
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[._-]+|[._-]+$/g, "");
  return replaced === "" ? "runx-package" : replaced;
}

function checkName(name: string): void {
  if (name.length > NAME_MAX || !NAME_PATTERN.test(name)) {
    const suggestion = suggestedPackageName(name).slice(0, NAME_MAX);
    throw new RuntimeError(
      "USAGE",
      `skill name ${JSON.stringify(name)} is not valid: use lowercase letters, digits, '.', '_' and '-', starting and ending with a letter or digit, at most ${NAME_MAX} characters (e.g. ${JSON.stringify(suggestion)})`,
      { field: "name" },
    );
  }
}

function checkObjective(objective: string): string {
  const trimmed = objective.trim();
  if (trimmed === "") {
    throw new RuntimeError("USAGE", "--objective must be a non-empty sentence", {
      field: "objective",
    });
  }
  if (trimmed.length > OBJECTIVE_MAX) {
    throw new RuntimeError(
      "USAGE",
      `--objective is ${trimmed.length} characters; at most ${OBJECTIVE_MAX} are allowed`,
      { field: "objective" },
    );
  }
  // The objective is one line of frontmatter; a control character would make the manual lie.
  if (/\p{Cc}/u.test(trimmed.replace(/\n/g, " "))) {
    throw new RuntimeError("USAGE", "--objective may not contain control characters", {
      field: "objective",
    });
  }
  return trimmed.replace(/\s*\n\s*/g, " ");
}

function invalidTarget(target: string, reason: string): RuntimeError {
  return new RuntimeError("SCAFFOLD_TARGET_INVALID", `target ${JSON.stringify(target)} ${reason}`, {
    field: "directory",
  });
}

function errnoOf(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error
    ? String(error.code)
    : undefined;
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** Resolves and checks the target directory; returns its absolute path. */
async function checkTarget(workspaceRoot: string, given: string): Promise<string> {
  const root = await realpath(workspaceRoot);
  const lexical = resolve(workspaceRoot, given);
  if (!within(resolve(workspaceRoot), lexical))
    throw invalidTarget(given, "is outside the workspace");
  if (resolve(workspaceRoot) === lexical) throw invalidTarget(given, "is the workspace itself");
  // Find the nearest existing ancestor and make sure symlinks do not lead it out.
  let probe = lexical;
  for (;;) {
    try {
      const st = await lstat(probe);
      if (probe === lexical) {
        if (st.isSymbolicLink()) throw invalidTarget(given, "is a symlink");
        if (!st.isDirectory()) throw invalidTarget(given, "exists and is not a directory");
        if ((await readdir(probe)).length > 0)
          throw invalidTarget(given, "exists and is not empty");
      }
      break;
    } catch (error) {
      if (error instanceof RuntimeError) throw error;
      if (errnoOf(error) !== "ENOENT") throw error;
      probe = dirname(probe);
    }
  }
  const canonical = await realpath(probe);
  if (!within(root, canonical))
    throw invalidTarget(given, "leads outside the workspace through a symlink");
  return join(canonical, relative(probe, lexical));
}

/** The description of a package created without an objective. */
const PLACEHOLDER_DESCRIPTION = "A new runx skill; replace this description with what it is for.";

function manual(name: string, objective: string | undefined): string {
  return `---
name: ${name}
description: ${JSON.stringify(objective ?? PLACEHOLDER_DESCRIPTION)}
---

# ${name}
${objective !== undefined ? `\nObjective: ${objective}\n` : ""}
This package was created by \`runx new\` and is a working starting point, not the finished
skill. Its one runner passes the supplied \`message\` to Runx's native \`data.digest\`
capability, so a run needs no package code, network access, credentials or subprocess and
seals a local receipt that records the SHA-256 digest of the exact message.

Replace this manual with what an operator needs to know: when to use the skill, what evidence
it requires, when it must stop, and what its receipt does and does not prove. Replace the
runner in \`X.yaml\` with the real procedure and keep the harness cases in step with it.
`;
}

function manifest(name: string): string {
  return `skill: ${name}
version: "0.1.0"

catalog:
  kind: graph
  audience: public
  visibility: public
  role: context
  execution: read
  completion: runtime_receipt
  requires_adapter: false
  approval: none

harness:
  cases:
    - name: ${name}-digest
      runner: default
      inputs:
        message: hello
      expect:
        status: sealed
        receipt:
          schema: runx.receipt.v1

runners:
  default:
    default: true
    type: graph
    inputs:
      message:
        type: string
        required: true
        description: Exact UTF-8 text to digest.
    graph:
      name: ${name}
      result_from:
        - digest
      steps:
        - id: digest
          tool: data.digest
          inputs:
            value: $input.message
            encoding: utf8_text
`;
}

/** A checked `runx new` request: nothing has been written. */
export interface CheckedNewSkill {
  name: string;
  objective?: string;
  /** Absolute target directory (absent or empty). */
  directory: string;
  /** The target relative to the workspace, `/`-separated (what skill-lab's tools take). */
  targetDir: string;
}

/** Checks name, objective and target; refuses with the field named, writing nothing. */
export async function checkNewSkill(options: NewSkillOptions): Promise<CheckedNewSkill> {
  checkName(options.name);
  const objective = options.objective !== undefined ? checkObjective(options.objective) : undefined;
  const given = options.directory ?? options.name;
  if (given === "" || given.includes("\0")) throw invalidTarget(given, "is not a usable path");
  const directory = await checkTarget(options.workspaceRoot, given);
  const root = await realpath(options.workspaceRoot);
  return {
    name: options.name,
    ...(objective !== undefined ? { objective } : {}),
    directory,
    targetDir: relative(root, directory).split(sep).join("/"),
  };
}

/**
 * The directory of a skill package shipped with the runtime (`packages/runtime/skills/<name>`),
 * found from this module whether it runs from `src/`, `dist/` or `dist/chunks/`.
 */
export function officialSkillDir(name: string): string {
  for (const base of ["../skills/", "../../skills/"]) {
    const dir = fileURLToPath(new URL(`${base}${name}`, import.meta.url));
    if (existsSync(join(dir, "SKILL.md"))) return dir;
  }
  throw new RuntimeError(
    "INTERNAL",
    `the bundled ${name} package is missing from this installation`,
  );
}

/** Writes the fixed package; refuses (and writes nothing) on a bad name, objective or target. */
export async function scaffoldSkill(options: NewSkillOptions): Promise<NewSkillResult> {
  const { directory, objective } = await checkNewSkill(options);
  const writes: Array<[string, string]> = [
    ["SKILL.md", manual(options.name, objective)],
    ["X.yaml", manifest(options.name)],
  ];
  await mkdir(directory, { recursive: true });
  for (const [file, contents] of writes) {
    // "wx": a file that appeared between the check and the write is not overwritten.
    await writeFile(join(directory, file), contents, { flag: "wx" });
  }
  const shown = relative(options.workspaceRoot, directory) || ".";
  return {
    name: options.name,
    directory,
    files: writes.map(([file]) => file),
    next_steps: [`runx harness ${shown} --json`, `runx skill ${shown} --message hello --json`],
  };
}
