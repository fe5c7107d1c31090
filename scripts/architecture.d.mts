/** Declarations of scripts/architecture.mjs (the import-boundary check of docs/ARCHITECTURE.md). */
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
export function checkRepository(repoRoot: string): string[];
