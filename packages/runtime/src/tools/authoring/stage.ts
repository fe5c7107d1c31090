/**
 * Scratch package directories the authoring tools build candidates in: created fresh (so no
 * path inside can be a pre-existing link), filled from normalized package paths, and always
 * removed by the caller's `finally`. Nothing here touches the target package.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, rm, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { PackageFile } from "./snapshot.js";

/** A scratch package directory. */
export interface Stage {
  dir: string;
  remove(): Promise<void>;
}

/** Creates `<parent>/.runx-<label>-<random>` (the parent must exist). */
export async function createStage(parent: string, label: string): Promise<Stage> {
  const dir = join(parent, `.runx-${label}-${randomBytes(6).toString("hex")}`);
  await mkdir(dir);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** Writes package files into the stage (modes kept when given). */
export async function stageFiles(
  stage: Stage,
  files: ReadonlyArray<Pick<PackageFile, "path" | "contents"> & { mode?: number }>,
): Promise<void> {
  for (const file of files) {
    const target = join(stage.dir, ...file.path.split("/"));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, file.contents);
    if (file.mode !== undefined) await chmod(target, file.mode & 0o7777);
  }
}

/** Removes package files from the stage (a missing one is no error). */
export async function unstageFiles(stage: Stage, paths: readonly string[]): Promise<void> {
  for (const path of paths) {
    await unlink(join(stage.dir, ...path.split("/"))).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }
}
