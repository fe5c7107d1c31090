export function webFingerprint(): string;
export function webAppExists(): boolean;
export function buildWeb(options?: {
  force?: boolean;
  log?: (line: string) => void;
}): "built" | "fresh";
