/** Debian's Chromium, driven by playwright-core (no browser download). */
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";
import type { Browser } from "playwright-core";

/** Where Chromium is expected (override with RUNX_E2E_CHROMIUM). */
export const CHROMIUM_PATH = process.env.RUNX_E2E_CHROMIUM ?? "/usr/bin/chromium";

/** Throws (never skips) when Chromium is missing, saying how to install it. */
export function requireChromium(): string {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: the e2e journeys need a real browser.\n` +
        `Install Debian's Chromium with\n` +
        `  apt-get install -y chromium || (apt-get update && apt-get install -y chromium)\n` +
        `(the README's test command does this), or set RUNX_E2E_CHROMIUM to a Chromium binary.`,
    );
  }
  return CHROMIUM_PATH;
}

/** Launches headless Chromium with the flags a CI container needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: requireChromium(),
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
    ],
  });
}
