/**
 * The console's skill catalog: workspace skills (`skills/*`, bundled or local) and the local
 * registry's verified records, searched by name, description and tags, with the trust tier,
 * the runners and each runner's declared inputs (what a start form needs).
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { RuntimeError, isRuntimeError } from "../errors.js";
import { loadSkillPackage, resolveSkillRef } from "../packages/resolve.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { buildSkillPackage } from "../parser/package.js";
import type { SkillPackage } from "../parser/package.js";
import type { LocalRegistry } from "../registry/local.js";
import { hasRegistryPrefix } from "../registry/ref.js";
import { displayPath } from "../workspace.js";
import { approvalsOf } from "./catalog-approvals.js";
import type { CatalogApproval } from "./catalog-approvals.js";

/** One declared input of a runner. */
export interface CatalogInput {
  name: string;
  type: string;
  required: boolean;
  description: string | null;
  default: JsonValue | null;
}

/** One runner of a catalog skill. */
export interface CatalogRunner {
  name: string;
  type: string;
  default: boolean;
  inputs: CatalogInput[];
  /** The approvals the runner asks for, with what the approver is shown (catalog-approvals.ts). */
  approvals: CatalogApproval[];
  /**
   * Whether a run of this runner may hand work to an adapter: an adapter runner, or a graph
   * with an adapter step or a nested skill (whose runner is not looked into here). The start
   * form offers "allow spawn" only then.
   */
  dispatches: boolean;
}

/** One catalog entry. */
export interface CatalogSkill {
  /** What `runs.start` takes as `skill`: the workspace path, or `owner/name@version`. */
  ref: string;
  /**
   * What `runx skill` takes for this entry from the workspace root, and what a host runs:
   * the workspace path (`skills/echo`), or the pinned registry ref (`registry:acme/echo@1.0.0`;
   * the prefix keeps a same-named workspace path from winning).
   */
  cliRef: string;
  name: string;
  description: string | null;
  tags: string[];
  source: "workspace" | "registry";
  /** `workspace` for the project's own skills; the registry record's tier otherwise. */
  trustTier: string;
  version: string | null;
  packageDigest: string | null;
  status: "ok" | "invalid";
  runners: CatalogRunner[];
  /** Why an invalid package cannot run (file/line when known). */
  problem: string | null;
}

function tagsOf(frontmatter: JsonObject): string[] {
  const runx = frontmatter.runx;
  const raw = runx !== undefined && isJsonObject(runx) ? runx.tags : undefined;
  const list = Array.isArray(raw) ? raw : Array.isArray(frontmatter.tags) ? frontmatter.tags : [];
  return list.filter((t): t is string => typeof t === "string");
}

function runnersOf(pkg: SkillPackage): CatalogRunner[] {
  return Object.values(pkg.runners).map((r) => ({
    name: r.name,
    type: r.type,
    default: r.default,
    inputs: Object.values(r.inputs).map((i) => ({
      name: i.name,
      type: i.type,
      required: i.required,
      description: i.description ?? null,
      default: i.default ?? null,
    })),
    approvals: approvalsOf(r),
    dispatches: r.type === "adapter" || (r.type === "graph" && graphMayDispatch(r.graph)),
  }));
}

/** True when any step (fanout branches included) runs an adapter or a nested skill. */
function graphMayDispatch(value: JsonValue): boolean {
  if (Array.isArray(value)) return value.some(graphMayDispatch);
  if (!isJsonObject(value)) return false;
  if (typeof value.skill === "string") return true;
  const run = value.run;
  if (run !== undefined && isJsonObject(run) && run.type === "adapter") return true;
  return Object.values(value).some(graphMayDispatch);
}

function matches(skill: CatalogSkill, needle: string): boolean {
  if (needle === "") return true;
  return [skill.name, skill.ref, skill.description ?? "", ...skill.tags]
    .join("\n")
    .toLowerCase()
    .includes(needle);
}

/**
 * The one refusal for a reference the catalog does not list. It never repeats the reference
 * nor says why: whether a host path exists must not be learnt from the answer.
 */
function notInCatalog(): RuntimeError {
  return new RuntimeError(
    "PACKAGE_NOT_FOUND",
    "skill is not in the catalog (a workspace skill under skills/ or a registry record owner/name@version)",
    { path: "skill" },
  );
}

/** Catalog services over one workspace and its local registry. */
export function catalogServices(deps: { root: string; registry: () => LocalRegistry }) {
  const workspace = async (): Promise<CatalogSkill[]> => {
    const dir = join(deps.root, "skills");
    let names: string[];
    try {
      names = (await readdir(dir, { withFileTypes: true }))
        .filter((d) => d.isDirectory() && !d.name.startsWith("."))
        .map((d) => d.name)
        .sort();
    } catch {
      return [];
    }
    const out: CatalogSkill[] = [];
    for (const name of names) {
      const path = join(dir, name);
      const ref = displayPath(deps.root, path);
      const base = {
        ref,
        cliRef: ref,
        source: "workspace" as const,
        trustTier: "workspace",
        version: null,
      };
      try {
        const resolved = await resolveSkillRef(path, { workspaceRoot: deps.root });
        const pkg = await loadSkillPackage(resolved);
        out.push({
          ...base,
          name: pkg.name,
          description: pkg.description ?? null,
          tags: tagsOf(pkg.frontmatter),
          packageDigest: null,
          status: "ok",
          runners: runnersOf(pkg),
          problem: null,
        });
      } catch (error) {
        if (!isRuntimeError(error)) throw error;
        if (error.code === "PACKAGE_NOT_FOUND") continue;
        out.push({
          ...base,
          name,
          description: null,
          tags: [],
          packageDigest: null,
          status: "invalid",
          runners: [],
          problem: error.located,
        });
      }
    }
    return out;
  };

  const registry = (needle: string, limit: number): CatalogSkill[] => {
    const reg = deps.registry();
    return reg.search(needle, { limit }).items.map((item) => {
      const ref = `${item.skill_id}@${item.version}`;
      let runners: CatalogRunner[] = item.runner_names.map((name) => ({
        name,
        type: "unknown",
        default: false,
        inputs: [],
        approvals: [],
        // Unread runner: assume it may dispatch, so the choice is offered.
        dispatches: true,
      }));
      let problem: string | null = null;
      try {
        const record = reg.read(ref);
        runners = runnersOf(
          buildSkillPackage({
            skillMd: { text: record.markdown, file: `${ref}/SKILL.md` },
            profile:
              record.profile_document === null
                ? undefined
                : { text: record.profile_document, file: `${ref}/X.yaml` },
          }),
        );
      } catch (error) {
        if (!isRuntimeError(error)) throw error;
        problem = error.located;
      }
      return {
        ref,
        cliRef: `registry:${ref}`,
        name: item.name,
        description: item.description,
        tags: item.tags,
        source: "registry" as const,
        trustTier: item.trust_tier,
        version: item.version,
        packageDigest: item.package_digest,
        status: problem === null ? ("ok" as const) : ("invalid" as const),
        runners,
        problem,
      };
    });
  };

  const services = {
    /**
     * Workspace skills then registry records whose name, ref, description or tags contain
     * `query` (case-insensitive), at most `limit`.
     */
    async search(input: { query?: string; limit?: number }): Promise<CatalogSkill[]> {
      const needle = (input.query ?? "").trim().toLowerCase();
      const limit = input.limit ?? 50;
      const local = (await workspace()).filter((s) => matches(s, needle));
      if (local.length >= limit) return local.slice(0, limit);
      // The registry's own search also matches owner, source type and runner names; keep
      // the catalog's rule (name, ref, description, tags) for both sources.
      const remote = registry(needle, 500).filter((s) => matches(s, needle));
      return [...local, ...remote].slice(0, limit);
    },

    /**
     * What a host that may start only catalog entries (the console, the API) runs for `ref`:
     * a workspace skill named by its catalog ref (`skills/<name>`) or name, or a registry
     * record by `owner/name[@version]`, pinned to the version the catalog found. Anything
     * else (a host path, `..`, a graph document, a symlinked package) is PACKAGE_NOT_FOUND with
     * one message whatever exists on the host.
     */
    async startRef(ref: string): Promise<string> {
      let entry: CatalogSkill;
      try {
        entry = await services.get(ref);
      } catch (error) {
        if (isRuntimeError(error) && error.code === "PACKAGE_NOT_FOUND") throw notInCatalog();
        throw error;
      }
      return entry.cliRef;
    },

    /** One skill by workspace path or registry ref (`owner/name[@version]`). */
    async get(ref: string): Promise<CatalogSkill> {
      if (hasRegistryPrefix(ref) || /^[a-z0-9][a-z0-9-]*\/[a-z0-9][a-z0-9-]*(@.*)?$/.test(ref)) {
        const reg = deps.registry();
        try {
          const record = reg.read(ref);
          const found = registry(record.name, 500).find(
            (s) => s.ref === `${record.skill_id}@${record.version}`,
          );
          if (found !== undefined) return found;
        } catch (error) {
          if (!isRuntimeError(error) || error.code !== "REGISTRY_NOT_FOUND") throw error;
        }
      }
      const hit = (await workspace()).find(
        (s) => s.ref === ref || s.ref === `skills/${ref}` || s.name === ref,
      );
      if (hit === undefined) throw notInCatalog();
      return hit;
    },
  };
  return services;
}

/** The catalog services' surface (`runtime.catalog`). */
export type CatalogServices = ReturnType<typeof catalogServices>;
