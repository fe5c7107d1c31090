/** Screenshots and logs under e2e/artifacts/ (gitignored; CI keeps them as test artifacts). */
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";

export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), "..", "artifacts");

/** A fresh e2e/artifacts/<name>/ directory. */
export function artifactDir(name: string): string {
  const dir = join(ARTIFACTS, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Numbered full-page screenshots for one journey: e2e/artifacts/<journey>/01-<step>.png. */
export function shooter(journey: string): (page: Page, step: string) => Promise<void> {
  const dir = artifactDir(journey);
  let n = 0;
  return async (page, step) => {
    n += 1;
    await page.screenshot({
      path: join(dir, `${String(n).padStart(2, "0")}-${step}.png`),
      fullPage: true,
    });
  };
}
