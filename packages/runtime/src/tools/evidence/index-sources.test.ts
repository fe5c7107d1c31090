import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { validateToolsEvidenceIndexSourcesOutput } from "../../generated/validate-tools-evidence-index-sources.output.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { failureCode, makeToolContext, successOutput } from "../../testing/tool-context.js";
import type { JsonRecord } from "../types.js";
import { evidenceIndexSourcesTool } from "./index-sources.js";

const sha = (text: string): string =>
  `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
const NOW = new Date("2026-03-01T12:00:00.000Z");
const ctx = makeToolContext({ now: () => NOW, scopes: ["runx:evidence:read"] });

/** A web.fetch packet as that tool returns it, in its named envelope. */
function fetchPacket(text: string, overrides: JsonRecord = {}): JsonRecord {
  return {
    fetch_result: {
      data: {
        decision: "ready",
        final_url: "https://example.test/a",
        status: 200,
        content_digest: sha(`<p>${text.trim()}</p>`),
        extract_mode: "text",
        extracted: text,
        provenance: {
          fetched_at: "2026-03-01T11:00:00.000Z",
          redirects: [],
          bytes: 12,
          truncated: false,
        },
        ...overrides,
      },
    },
  };
}

/** An fs.read packet (bare). */
function filePacket(contents: string, overrides: JsonRecord = {}): JsonRecord {
  return {
    path: "notes/a.md",
    repo_root: ".",
    contents,
    bytes: Buffer.byteLength(contents),
    truncated: false,
    content_digest: sha(contents),
    ...overrides,
  };
}

async function index(input: JsonRecord): Promise<JsonRecord> {
  const output = successOutput(await evidenceIndexSourcesTool.execute(input, ctx));
  expect(validateToolsEvidenceIndexSourcesOutput(output)).toBe(true);
  return output.source_index as JsonRecord;
}

describe("evidence.index_sources", () => {
  it("indexes a fetch and a local file as ready, with digests, evidence and default limits", async () => {
    const result = await index({
      objective: "  compare the two notes ",
      source_packets: [fetchPacket("  Alpha text. "), filePacket("beta\n")],
    });
    expect(result.decision).toBe("ready");
    expect(result.objective).toBe("compare the two notes");
    expect(result.blockers).toEqual([]);
    const fetched = {
      source_digest: sha("Alpha text."),
      content_digest: sha("<p>Alpha text.</p>"),
      source_ref: "https://example.test/a",
      source_kind: "fetch",
      extracted: "Alpha text.",
      provenance: {
        observed_at: "2026-03-01T11:00:00.000Z",
        bytes: 12,
        truncated: false,
        status: 200,
        redirects: [],
      },
    };
    const local = {
      source_digest: sha("beta\n"),
      content_digest: sha("beta\n"),
      source_ref: "file:notes/a.md",
      source_kind: "local_file",
      extracted: "beta\n",
      provenance: {
        observed_at: NOW.toISOString(),
        bytes: 5,
        truncated: false,
        path: "notes/a.md",
      },
    };
    expect(result.sources).toEqual([fetched, local]);
    expect(result.source_digests).toEqual([sha("Alpha text."), sha("beta\n")]);
    expect(result.source_evidence).toEqual([
      {
        evidence_digest: fetched.source_digest,
        content_digest: fetched.content_digest,
        source_ref: fetched.source_ref,
        source_kind: "fetch",
        provenance: fetched.provenance,
      },
      {
        evidence_digest: local.source_digest,
        content_digest: local.content_digest,
        source_ref: local.source_ref,
        source_kind: "local_file",
        provenance: local.provenance,
      },
    ]);
    const material = [fetched, local].map(({ extracted, ...rest }) => ({
      ...rest,
      extracted_digest: sha(extracted),
    }));
    expect(result.index_digest).toBe(hashCanonical(material));
    expect(result.limits).toEqual({
      max_sources: 20,
      max_source_characters: 100000,
      max_total_characters: 500000,
      supplied_sources: 2,
      indexed_sources: 2,
      indexed_characters: 16,
    });
  });

  it("deduplicates sources by the digest of their text, keeping the first", async () => {
    const result = await index({
      objective: "x",
      source_packets: [
        fetchPacket("same"),
        { data: (fetchPacket("same").fetch_result as JsonRecord).data ?? null },
      ],
    });
    expect(result.decision).toBe("ready");
    expect(result.source_digests).toEqual([sha("same")]);
    expect(result.limits).toMatchObject({
      supplied_sources: 2,
      indexed_sources: 1,
      indexed_characters: 8,
    });
  });

  it("blocks a missing objective and an empty source list", async () => {
    const result = await index({ objective: "  ", source_packets: [] });
    expect(result.decision).toBe("needs_more_evidence");
    expect(result.blockers).toEqual(["objective is missing", "source_packets is empty"]);
    expect(result.index_digest).toBe(hashCanonical([]));
  });

  it("names every failed check of a fetch packet in one blocker", async () => {
    const result = await index({
      objective: "x",
      source_packets: [
        fetchPacket("", {
          decision: "policy_denied",
          status: 404,
          final_url: "ftp://example.test/",
          content_digest: "sha256:ABC",
          provenance: { bytes: -1 },
        }),
      ],
    });
    expect(result.sources).toEqual([]);
    expect(result.blockers).toEqual([
      "source_packets[0]: decision is not ready, status is not 2xx, final_url is not http(s), content_digest is not sha256, extracted text is missing, provenance.fetched_at is missing, provenance.bytes is invalid, provenance.truncated is missing",
    ]);
  });

  it("refuses a local file whose digest does not match, or that was truncated", async () => {
    const result = await index({
      objective: "x",
      source_packets: [
        filePacket("real", { content_digest: sha("other") }),
        filePacket("cut", { truncated: true, bytes: "3" }),
      ],
    });
    expect(result.blockers).toEqual([
      "source_packets[0]: content_digest does not match contents",
      "source_packets[1]: local file read is truncated",
    ]);
  });

  it("enforces max_sources, max_source_characters and max_total_characters", async () => {
    const tooMany = await index({
      objective: "x",
      max_sources: 1,
      source_packets: [fetchPacket("one"), fetchPacket("two")],
    });
    expect(tooMany.blockers).toEqual(["source_packets exceeds 1"]);
    expect(tooMany.source_digests).toEqual([sha("one")]);

    const tooLong = await index({
      objective: "x",
      max_source_characters: 3,
      source_packets: [fetchPacket("four"), filePacket("héllo")],
    });
    expect(tooLong.blockers).toEqual([
      "source_packets[0]: extracted text exceeds 3 characters",
      "source_packets[1]: contents text exceeds 3 characters",
    ]);

    const tooMuch = await index({
      objective: "x",
      max_total_characters: 5,
      source_packets: [fetchPacket("abc"), fetchPacket("def")],
    });
    expect(tooMuch.decision).toBe("needs_more_evidence");
    expect(tooMuch.blockers).toEqual(["indexed text exceeds 5 characters"]);
    expect(tooMuch.source_digests).toHaveLength(2);
  });

  it("refuses unknown fields and a missing objective with INPUT_INVALID", async () => {
    expect(failureCode(await evidenceIndexSourcesTool.execute({ source_packets: [] }, ctx))).toBe(
      "INPUT_INVALID",
    );
    expect(
      failureCode(
        await evidenceIndexSourcesTool.execute(
          { objective: "x", source_packets: [], extra: 1 },
          ctx,
        ),
      ),
    ).toBe("INPUT_INVALID");
    expect(
      failureCode(
        await evidenceIndexSourcesTool.execute(
          { objective: "x", source_packets: [], max_sources: -1 },
          ctx,
        ),
      ),
    ).toBe("INPUT_INVALID");
  });

  it("declares the evidence read scope and no mutation", () => {
    expect(evidenceIndexSourcesTool.scopes).toEqual(["runx:evidence:read"]);
    expect(evidenceIndexSourcesTool.mutating).toBe(false);
  });
});
