/**
 * `evidence.index_sources`: bounds, deduplicates and digests the governed source packets a
 * research-style graph fetched or read, so later steps (agents, `evidence.verify_artifact`)
 * can cite sources by digest. Over-limit or malformed packets never fail the tool: they are
 * blockers, and any blocker turns the decision to `needs_more_evidence`. Limits and defaults
 * follow upstream's capability contract (README "Evidence tools").
 */
import inputSchema from "../../../schemas/tools/evidence/index-sources.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/evidence/index-sources.output.schema.json" with { type: "json" };
import { validateToolsEvidenceIndexSourcesInput } from "../../generated/validate-tools-evidence-index-sources.input.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import type { Json, JsonRecord, NativeTool } from "../types.js";
import {
  evidenceJson,
  indexMaterial,
  indexSource,
  sourceJson,
  unwrapSourcePacket,
  type IndexedSource,
} from "./source.js";

/** The scope both evidence tools require. */
export const EVIDENCE_READ_SCOPE = "runx:evidence:read";

/** Defaults of `evidence.index_sources`. */
export const INDEX_DEFAULTS = {
  max_sources: 20,
  max_source_characters: 100_000,
  max_total_characters: 500_000,
} as const;

/** `evidence.index_sources` input after schema validation. */
export interface EvidenceIndexInput {
  objective: string;
  source_packets: Json[];
  max_sources?: number;
  max_source_characters?: number;
  max_total_characters?: number;
}

/** Builds the `source_index` packet (pure; `observedAt` is the runtime's observation time). */
export function buildSourceIndex(input: EvidenceIndexInput, observedAt: string): JsonRecord {
  const objective = input.objective.trim();
  const supplied = input.source_packets;
  const maxSources = input.max_sources ?? INDEX_DEFAULTS.max_sources;
  const maxSourceCharacters = input.max_source_characters ?? INDEX_DEFAULTS.max_source_characters;
  const maxTotalCharacters = input.max_total_characters ?? INDEX_DEFAULTS.max_total_characters;

  const blockers: string[] = [];
  if (objective === "") blockers.push("objective is missing");
  if (supplied.length === 0) blockers.push("source_packets is empty");
  if (supplied.length > maxSources) blockers.push(`source_packets exceeds ${maxSources}`);

  const admitted: IndexedSource[] = [];
  let characters = 0;
  supplied.slice(0, maxSources).forEach((raw, index) => {
    const result = indexSource(unwrapSourcePacket(raw), observedAt, maxSourceCharacters);
    if (result.ok) {
      characters += result.source.extracted.length;
      admitted.push(result.source);
    } else {
      blockers.push(`source_packets[${index}]: ${result.blockers.join(", ")}`);
    }
  });
  if (characters > maxTotalCharacters) {
    blockers.push(`indexed text exceeds ${maxTotalCharacters} characters`);
  }

  const seen = new Set<string>();
  const sources = admitted.filter((source) => {
    if (seen.has(source.source_digest)) return false;
    seen.add(source.source_digest);
    return true;
  });

  return {
    source_index: {
      decision: blockers.length === 0 ? "ready" : "needs_more_evidence",
      objective,
      sources: sources.map(sourceJson),
      source_digests: sources.map((source) => source.source_digest),
      source_evidence: sources.map(evidenceJson),
      index_digest: hashCanonical(sources.map(indexMaterial)),
      blockers,
      limits: {
        max_sources: maxSources,
        max_source_characters: maxSourceCharacters,
        max_total_characters: maxTotalCharacters,
        supplied_sources: supplied.length,
        indexed_sources: sources.length,
        indexed_characters: characters,
      },
    },
  };
}

/** The `evidence.index_sources` tool. */
export const evidenceIndexSourcesTool: NativeTool = defineTool<EvidenceIndexInput, JsonRecord>({
  name: "evidence.index_sources",
  description: "Bound, deduplicate, and digest governed remote or local source packets.",
  mutating: false,
  scopes: [EVIDENCE_READ_SCOPE],
  inputSchema,
  outputSchema,
  validate: validateToolsEvidenceIndexSourcesInput,
  run(input, ctx) {
    const output = buildSourceIndex(input, ctx.now().toISOString());
    const index = output.source_index as { decision: string; sources: Json[] };
    return Promise.resolve({
      output,
      summary: `${index.decision}: ${index.sources.length} source(s)`,
    });
  },
});
