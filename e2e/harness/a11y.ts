/**
 * Accessibility and small-screen checks the journeys run on a page: axe-core's rules in the
 * page itself, and horizontal overflow at a phone's width.
 */
import { createRequire } from "node:module";
import type { Page } from "playwright-core";
import type { Journey } from "./journey.js";

const require = createRequire(import.meta.url);
// axe-core ships its browser bundle as a string (`source`), evaluated in the page.
const AXE_SOURCE = (require("axe-core") as { source: string }).source;

/** One axe violation, reduced to what a failure message needs. */
export interface A11yViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. The script goes in
 * through the DevTools protocol (page.evaluate), which the console's CSP does not govern: an
 * injected <script> tag would be refused, and relaxing the CSP would test a different page.
 */
export async function seriousViolations(page: Page): Promise<A11yViolation[]> {
  const loaded = await page.evaluate("typeof window.axe === 'object'");
  if (loaded !== true) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate<A11yViolation[]>(`(async () => {
    const result = await window.axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    }));
  })()`);
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical");
}

/** A readable list of violations for an assertion message. */
export function describeViolations(where: string, violations: A11yViolation[]): string {
  return violations
    .map((v) => `${where}: ${v.id} (${v.impact}) ${v.help} at ${v.targets.join(", ")}`)
    .join("\n");
}

/** The page's widths: what the document needs and what the viewport shows. */
export async function horizontalOverflow(
  page: Page,
): Promise<{ scrollWidth: number; viewport: number; culprits: string[] }> {
  return await page.evaluate<{
    scrollWidth: number;
    viewport: number;
    culprits: string[];
  }>(`(() => {
    const viewport = document.documentElement.clientWidth;
    const culprits = [];
    for (const el of document.querySelectorAll("body *")) {
      const r = el.getBoundingClientRect();
      if (r.right > viewport + 1 && culprits.length < 8) {
        // Inside a scroll container (a wide table's wrapper) an element may be wider.
        let scrolled = false;
        for (let p = el.parentElement; p; p = p.parentElement) {
          const o = getComputedStyle(p).overflowX;
          if (o === "auto" || o === "scroll" || o === "hidden") { scrolled = true; break; }
        }
        if (!scrolled) {
          culprits.push(el.tagName.toLowerCase() + (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : ""));
        }
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, viewport, culprits };
  })()`);
}

/** The widths a changed console page is checked at: a laptop, a small desktop and a phone. */
export const LAYOUT_WIDTHS = [1366, 1280, 390] as const;

/**
 * Screenshots, axe-core (no serious violations) and no sideways scroll at every width in
 * `LAYOUT_WIDTHS`; the viewport ends back at 1280 px. Screenshots go to the journey's folder.
 */
export async function checkLayouts(
  page: Page,
  name: string,
  journey: Pick<Journey, "shot">,
): Promise<void> {
  for (const width of LAYOUT_WIDTHS) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await journey.shot(page, `${name}-${width}`);
    const violations = await seriousViolations(page);
    if (violations.length > 0) {
      throw new Error(describeViolations(`${name} at ${width}px`, violations));
    }
    const overflow = await horizontalOverflow(page);
    if (overflow.scrollWidth > overflow.viewport || overflow.culprits.length > 0) {
      throw new Error(
        `${name} at ${width}px overflows (${overflow.scrollWidth} > ${overflow.viewport}): ${overflow.culprits.join(", ")}`,
      );
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
