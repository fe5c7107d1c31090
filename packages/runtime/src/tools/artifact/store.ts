/**
 * The run's local artifact area (`<runDir>/artifacts`, data-and-receipts C.1). Admission
 * snapshots a file into `blobs/<sha256>` (copied, fsynced, read-only) and binds its media
 * type, byte count and whole-file digest to an opaque reference:
 *
 *   runx:local-artifact:sha256:<hex>, hex = sha256(namespace ‖ 0 ‖ media_type ‖ 0 ‖ bytes ‖ 0 ‖ whole_digest)
 *
 * The namespace is 32 random bytes created with the run's artifact area, so a reference is
 * meaningless outside the run that admitted it (another run, or a guessed digest, is unknown)
 * and re-admitting the same content with the same media type yields the same reference and
 * keeps the first snapshot. Host paths never leave this module.
 *
 * The area's directories are created and checked one component at a time (ensureStateDir):
 * a symlinked `.runx/runs`, run directory or `artifacts/` is refused, never written through;
 * its files are opened without following a symlink.
 */
import { createHash, randomBytes } from "node:crypto";
import { lstat, open, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { RuntimeError } from "../../errors.js";
import { isSha256Digest } from "../../receipts/canonical.js";
import { ensureStateDir } from "../../workspace.js";
import { openForRead } from "../file-io.js";
import type { ContainedPath } from "../paths.js";

/** The prefix of every local artifact reference. */
export const ARTIFACT_REF_PREFIX = "runx:local-artifact:sha256:";
/** Largest file one admission snapshots. */
export const ARTIFACT_MAX_BYTES = 512 * 1024 * 1024;

const COPY_CHUNK = 1024 * 1024;
const REF_PATTERN = /^runx:local-artifact:sha256:([0-9a-f]{64})$/;

/** What a reference is bound to. */
export interface ArtifactRecord {
  media_type: string;
  bytes: number;
  whole_digest: string;
}

/** An admitted artifact, ready to page through. */
export interface StoredArtifact extends ArtifactRecord {
  artifact_ref: string;
  /** The snapshot (host path; internal). */
  blob: string;
}

function areaOf(runDir: string): { area: string; blobs: string; refs: string } {
  const area = join(runDir, "artifacts");
  return { area, blobs: join(area, "blobs"), refs: join(area, "refs") };
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** The run's namespace secret, created on first use (first writer wins). */
async function namespaceOf(area: string, create: boolean): Promise<Buffer | undefined> {
  const file = join(area, "namespace");
  if (create) {
    try {
      await writeFile(file, randomBytes(32).toString("hex"), { flag: "wx", mode: 0o600 });
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
    }
  }
  let text: string;
  try {
    text = (await readSmall(file)).trim();
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
  if (!/^[0-9a-f]{64}$/.test(text)) {
    throw new RuntimeError("INTERNAL", "the run's artifact namespace is corrupt");
  }
  return Buffer.from(text, "hex");
}

/** Reads one of the area's small files, never through a symlink. */
async function readSmall(file: string): Promise<string> {
  const handle = await openForRead(file);
  try {
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

function refHex(namespace: Buffer, record: ArtifactRecord): string {
  return createHash("sha256")
    .update(namespace)
    .update(`\0${record.media_type}\0${record.bytes}\0${record.whole_digest}`)
    .digest("hex");
}

function tooLarge(rel: string): RuntimeError {
  return new RuntimeError(
    "LIMIT_EXCEEDED",
    `artifact.admit: ${JSON.stringify(rel)} is larger than ${ARTIFACT_MAX_BYTES} bytes`,
    { path: "path", target: rel, limit: ARTIFACT_MAX_BYTES },
  );
}

/**
 * Copies `source` into a temp file in `blobs`, hashing and counting as it goes. The size is
 * checked on metadata and again while copying, so a file that grows mid-copy fails.
 */
async function snapshot(
  source: ContainedPath,
  blobs: string,
  maxBytes: number,
): Promise<{ temp: string; bytes: number; hex: string }> {
  const input = await openForRead(source.absolute);
  const temp = join(blobs, `.admit-${randomBytes(8).toString("hex")}.tmp`);
  try {
    const info = await input.stat();
    if (!info.isFile()) {
      throw new RuntimeError(
        "INPUT_INVALID",
        `artifact.admit: ${JSON.stringify(source.relative)} is not a regular file`,
      );
    }
    if (info.size > maxBytes) throw tooLarge(source.relative);
    const output = await open(temp, "wx", 0o600);
    const hash = createHash("sha256");
    const chunk = Buffer.alloc(COPY_CHUNK);
    let bytes = 0;
    try {
      for (;;) {
        const { bytesRead } = await input.read(chunk, 0, COPY_CHUNK, bytes);
        if (bytesRead === 0) break;
        bytes += bytesRead;
        if (bytes > maxBytes) throw tooLarge(source.relative);
        const piece = chunk.subarray(0, bytesRead);
        hash.update(piece);
        await output.write(piece);
      }
      await output.chmod(0o400);
      await output.sync();
    } finally {
      await output.close();
    }
    return { temp, bytes, hex: hash.digest("hex") };
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  } finally {
    await input.close();
  }
}

/** Snapshots a contained regular file and returns its run-scoped reference. */
export async function admitArtifact(opts: {
  runDir: string;
  source: ContainedPath;
  mediaType: string;
  maxBytes?: number;
}): Promise<StoredArtifact> {
  const { area, blobs, refs } = areaOf(opts.runDir);
  ensureStateDir(blobs, { mode: 0o700 });
  ensureStateDir(refs, { mode: 0o700 });
  const namespace = (await namespaceOf(area, true)) as Buffer;
  const copy = await snapshot(opts.source, blobs, opts.maxBytes ?? ARTIFACT_MAX_BYTES);
  const blob = join(blobs, copy.hex);
  try {
    // The same content admitted twice keeps its first snapshot.
    await lstat(blob);
    await unlink(copy.temp);
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
    await rename(copy.temp, blob);
  }
  const record: ArtifactRecord = {
    media_type: opts.mediaType,
    bytes: copy.bytes,
    whole_digest: `sha256:${copy.hex}`,
  };
  const hex = refHex(namespace, record);
  try {
    await writeFile(join(refs, `${hex}.json`), JSON.stringify(record), { flag: "wx", mode: 0o400 });
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
  }
  return { ...record, artifact_ref: `${ARTIFACT_REF_PREFIX}${hex}`, blob };
}

function unknownRef(): RuntimeError {
  return new RuntimeError(
    "ARTIFACT_NOT_FOUND",
    "artifact_ref is not an artifact admitted in this run",
    { path: "artifact_ref" },
  );
}

function parseRecord(text: string): ArtifactRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = value as Partial<ArtifactRecord> | null;
  if (
    r === null ||
    typeof r !== "object" ||
    typeof r.media_type !== "string" ||
    typeof r.bytes !== "number" ||
    !Number.isSafeInteger(r.bytes) ||
    typeof r.whole_digest !== "string" ||
    !isSha256Digest(r.whole_digest)
  ) {
    return undefined;
  }
  return { media_type: r.media_type, bytes: r.bytes, whole_digest: r.whole_digest };
}

/**
 * Finds an artifact admitted in this run. Malformed, foreign and unknown references, and a
 * binding that no longer hashes to its reference, are ARTIFACT_NOT_FOUND.
 */
export async function lookupArtifact(runDir: string, ref: string): Promise<StoredArtifact> {
  const hex = REF_PATTERN.exec(ref)?.[1];
  if (hex === undefined) throw unknownRef();
  const { area, blobs, refs } = areaOf(runDir);
  if (!ensureStateDir(refs, { create: false })) throw unknownRef();
  const namespace = await namespaceOf(area, false);
  if (namespace === undefined) throw unknownRef();
  let text: string;
  try {
    text = await readSmall(join(refs, `${hex}.json`));
  } catch (error) {
    if (errnoOf(error) === "ENOENT") throw unknownRef();
    throw error;
  }
  const record = parseRecord(text);
  if (record === undefined || refHex(namespace, record) !== hex) throw unknownRef();
  const blob = join(blobs, record.whole_digest.slice("sha256:".length));
  return { ...record, artifact_ref: ref, blob };
}
