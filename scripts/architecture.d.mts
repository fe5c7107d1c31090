/** Declarations of scripts/architecture.mjs (the structure checks of docs/ARCHITECTURE.md). */
export function sourceFiles(roots: readonly string[]): string[];
export function importSpecifiers(text: string): string[];
export function importGraph(
  files: readonly string[],
  read?: (file: string) => string,
): Map<string, string[]>;
export function findCycles(graph: Map<string, string[]>): string[][];
export function parseLayerTable(markdown: string): Map<string, Set<string>>;
export function isTestFile(rel: string): boolean;
export function unitOf(rel: string): string;
export function layerViolations(
  graph: Map<string, string[]>,
  srcRoot: string,
  rules: Map<string, Set<string>>,
): string[];
export function testCodeImports(
  graph: Map<string, string[]>,
  srcRoots: readonly string[],
): string[];
export const MAX_SOURCE_LINES: number;
export const OVERSIZED_PENDING: ReadonlyMap<string, string>;
export function isLengthExempt(rel: string): boolean;
export function oversizedFiles(
  files: readonly string[],
  repoRoot: string,
  options?: {
    read?: (file: string) => string;
    limit?: number;
    pending?: ReadonlyMap<string, string>;
  },
): string[];
export function sourceRoots(repoRoot: string): string[];
export function checkRepository(repoRoot: string): string[];
