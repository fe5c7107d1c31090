import type { ChildProcess } from "node:child_process";

export const ROOT: string;
export function ensureApiBuilt(log?: (line: string) => void): "no-build-script" | "fresh" | "built";
export function apiCommand(): [string, string[]];
export function freePorts(count: number): Promise<number[]>;
type OnLine = (line: string, stream: "stdout" | "stderr") => void;
export function startApi(options: {
  env: NodeJS.ProcessEnv;
  onLine?: OnLine;
  timeoutMs?: number;
}): Promise<{ child: ChildProcess; apiUrl: string; bootstrapUrl: string | null; tail: string[] }>;
export function startWeb(options: {
  port: number;
  apiUrl: string;
  env: NodeJS.ProcessEnv;
  onLine?: OnLine;
  timeoutMs?: number;
}): Promise<{ child: ChildProcess; url: string; tail: string[] }>;
export function stopService(child: ChildProcess, graceMs?: number): Promise<void>;
