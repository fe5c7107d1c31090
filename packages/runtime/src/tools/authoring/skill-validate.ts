/**
 * `runx.skill.validate`: validates one package (an existing one named by `skill_ref`, or an
 * inline candidate given as `candidate_files`) and runs its own harness when that is safe, as
 * the named `skill_validation` packet (runx.skill.validation.v1). The harness runs by itself
 * only for packages whose catalog execution class is `read` or `plan` (or undeclared); an
 * `execute` package needs `allow_execute_harness: true`, otherwise the verdict is
 * `needs_consequential_harness_approval`. A package that fails to load or whose harness fails
 * is the verdict `validation_failed`, with the reason; a bad reference or candidate fails the
 * call. Inline candidates are staged in the run directory and removed afterwards; nothing in
 * the workspace is written.
 */
import { mkdir } from "node:fs/promises";
import { basename, dirname, posix } from "node:path";
import inputSchema from "../../../schemas/tools/authoring/runx-skill-validate.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/authoring/runx-skill-validate.output.schema.json" with { type: "json" };
import { isRuntimeError, RuntimeError } from "../../errors.js";
import { validateToolsAuthoringRunxSkillValidateInput } from "../../generated/validate-tools-authoring-runx-skill-validate.input.js";
import type { JsonObject } from "../../parser/json.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import { resolveDirectory, resolveReadable, type ToolRoot } from "../paths.js";
import { StateGuard } from "../runx-state.js";
import type { JsonRecord, NativeTool, ToolContext } from "../types.js";
import {
  executionClass,
  failedInspection,
  inspectionOf,
  loadCandidate,
  runCandidateHarness,
} from "./candidate.js";
import { packagePath, rejectSecretMaterial } from "./content-rules.js";
import { MAX_PACKAGE_BYTES } from "./snapshot.js";
import { createStage, stageFiles } from "./stage.js";
import { authoringRoot } from "./target.js";

const TOOL = "runx.skill.validate";
const INLINE = "inline-candidate";

interface ValidateInput {
  repo_root?: string;
  skill_ref?: string | null;
  candidate_files?: Array<{ path: string; contents: string }> | null;
  allow_execute_harness?: boolean;
}

function invalid(path: string, message: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `${TOOL}: ${message}`, { path });
}

/** Resolves a package reference (a directory or its SKILL.md) inside one root. */
async function resolveIn(root: ToolRoot, ref: string): Promise<{ dir: string; shown: string }> {
  if (ref.endsWith("SKILL.md")) {
    const file = await resolveReadable(root, ref, "skill_ref");
    const shown = file.relative.slice(0, -"SKILL.md".length).replace(/\/$/, "") || ".";
    return { dir: file.absolute.slice(0, -"/SKILL.md".length), shown };
  }
  const dir = await resolveDirectory(root, ref, "skill_ref");
  return { dir: dir.absolute, shown: dir.relative };
}

/**
 * `skill_ref` relative to the workspace root, else relative to the calling skill's own
 * package inside its catalog (the directory holding it), as upstream skills name siblings.
 */
async function resolveRef(
  ctx: ToolContext,
  root: ToolRoot,
  ref: string,
): Promise<{ dir: string; shown: string }> {
  let notFound: RuntimeError | undefined;
  if (!ref.split("/").includes("..")) {
    try {
      return await resolveIn(root, ref);
    } catch (error) {
      if (!isRuntimeError(error) || error.code !== "FILE_NOT_FOUND") throw error;
      notFound = error;
    }
  }
  const catalog: ToolRoot = {
    dir: dirname(ctx.packageDir),
    label: "(owning catalog)",
    guard: StateGuard.forContext(ctx),
  };
  // `../sibling` is how a skill names a package beside it; it must stay inside the catalog.
  const inCatalog = posix.normalize(`${basename(ctx.packageDir)}/${ref}`);
  if (inCatalog === ".." || inCatalog.startsWith("../") || posix.isAbsolute(ref)) {
    throw new RuntimeError(
      "PATH_ESCAPE",
      `skill_ref ${JSON.stringify(ref)} leaves the owning catalog`,
      {
        path: "skill_ref",
        target: ref,
      },
    );
  }
  try {
    return await resolveIn(catalog, inCatalog);
  } catch (error) {
    // Name the reference as the caller wrote it, not its catalog-relative form.
    if (isRuntimeError(error) && error.code === "FILE_NOT_FOUND") {
      throw (
        notFound ??
        new RuntimeError("FILE_NOT_FOUND", `skill_ref ${JSON.stringify(ref)} does not exist`, {
          path: "skill_ref",
          target: ref,
        })
      );
    }
    throw error;
  }
}

function admitCandidateFiles(
  files: Array<{ path: string; contents: string }>,
): Array<{ path: string; contents: Buffer }> {
  const seen = new Set<string>();
  let bytes = 0;
  const out = files.map((file, i) => {
    const field = `candidate_files[${i}].path`;
    const path = packagePath(file.path, field);
    if (seen.has(path)) throw invalid(field, `candidate contains duplicate file ${path}`);
    seen.add(path);
    const contents = Buffer.from(file.contents, "utf8");
    bytes += contents.length;
    if (bytes > MAX_PACKAGE_BYTES) {
      throw new RuntimeError(
        "LIMIT_EXCEEDED",
        `${TOOL}: candidate exceeds ${MAX_PACKAGE_BYTES} bytes`,
        {
          path: "candidate_files",
          limit: MAX_PACKAGE_BYTES,
        },
      );
    }
    rejectSecretMaterial(path, file.contents, `candidate_files[${i}].contents`);
    return { path, contents };
  });
  if (!seen.has("SKILL.md") || !seen.has("X.yaml")) {
    throw invalid("candidate_files", "candidate must contain SKILL.md and X.yaml");
  }
  return out;
}

/** Loads, inspects and (when allowed) harnesses the package in `dir`. */
async function validateDir(
  ctx: ToolContext,
  dir: string,
  allowExecute: boolean,
): Promise<{ verdict: string; inspect: JsonObject; harness: JsonObject }> {
  let inspect: JsonObject;
  let runHarness = true;
  try {
    const pkg = await loadCandidate(ctx, dir);
    inspect = inspectionOf(pkg);
    const execution = executionClass(pkg);
    runHarness = allowExecute || execution === null || execution === "read" || execution === "plan";
  } catch (error) {
    const failed = failedInspection(error);
    return {
      verdict: "validation_failed",
      inspect: failed,
      harness: {
        attempted: false,
        status: "failed",
        reason: typeof failed.error === "string" ? failed.error : "the package does not load",
      },
    };
  }
  if (!runHarness) {
    return {
      verdict: "needs_consequential_harness_approval",
      inspect,
      harness: {
        attempted: false,
        status: "skipped",
        reason: "needs_consequential_harness_approval",
      },
    };
  }
  try {
    return {
      verdict: "tested",
      inspect,
      harness: await runCandidateHarness(ctx, dir, "skill_ref"),
    };
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    return {
      verdict: "validation_failed",
      inspect,
      harness: { attempted: true, status: "failed", reason: error.message },
    };
  }
}

/** The `runx.skill.validate` tool. */
export const skillValidateTool: NativeTool = withNamedOutput(
  defineTool<ValidateInput, JsonRecord>({
    name: TOOL,
    description: "Validate and safely harness an existing or inline skill package.",
    mutating: false,
    scopes: ["fs.read"],
    inputSchema,
    outputSchema,
    validate: validateToolsAuthoringRunxSkillValidateInput,
    async run(input, ctx) {
      // An absent optional field may arrive as null from a graph input that was not given.
      const files = input.candidate_files ?? undefined;
      const skillRef = input.skill_ref ?? undefined;
      if (skillRef === undefined && files === undefined) {
        throw invalid("skill_ref", "skill_ref or candidate_files is required");
      }
      if (skillRef !== undefined && files !== undefined) {
        throw invalid("candidate_files", "skill_ref and candidate_files are mutually exclusive");
      }
      const root = await authoringRoot(ctx, input.repo_root);
      const allow = input.allow_execute_harness ?? false;
      let result: Awaited<ReturnType<typeof validateDir>>;
      let resolved: string;
      if (files !== undefined) {
        const admitted = admitCandidateFiles(files);
        await mkdir(ctx.runDir, { recursive: true });
        const stage = await createStage(ctx.runDir, "inline-skill");
        try {
          await stageFiles(stage, admitted);
          result = await validateDir(ctx, stage.dir, allow);
        } finally {
          await stage.remove();
        }
        resolved = INLINE;
      } else {
        const ref = await resolveRef(ctx, root, skillRef ?? "");
        result = await validateDir(ctx, ref.dir, allow);
        resolved = ref.shown;
      }
      const packet: JsonRecord = {
        schema: "runx.skill.validation.v1",
        requested_ref: skillRef ?? INLINE,
        resolved_ref: resolved,
        verdict: result.verdict,
        inspect: result.inspect,
        harness: result.harness,
      };
      return { output: packet, summary: `${resolved}: ${result.verdict}` };
    },
  }),
  { name: "skill_validation", packet: "runx.skill.validation.v1" },
);
