import type { ReactNode } from "react";
import { outcomeView } from "@/lib/outcomes";
import type { OutcomeIcon } from "@/lib/outcomes";

/** 16 × 16 strokes in the text colour; each outcome has its own shape besides its colour. */
const ICONS: Record<OutcomeIcon, ReactNode> = {
  check: <path d="M3 8.5l3 3 7-7" />,
  play: <path d="M5 3.5v9l7-4.5z" />,
  pause: <path d="M5.5 3.5v9M10.5 3.5v9" />,
  dots: (
    <>
      <circle cx="3.5" cy="8" r="1" />
      <circle cx="8" cy="8" r="1" />
      <circle cx="12.5" cy="8" r="1" />
    </>
  ),
  question: (
    <>
      <path d="M5.8 6a2.3 2.3 0 1 1 3.2 2.1c-.6.3-1 .8-1 1.5v.4" />
      <circle cx="8" cy="12.5" r=".6" />
    </>
  ),
  lock: (
    <>
      <rect x="3.5" y="7" width="9" height="6.5" rx="1" />
      <path d="M5.5 7V5a2.5 2.5 0 0 1 5 0v2" />
    </>
  ),
  hand: <path d="M3.5 8h9M8 2.5a5.5 5.5 0 1 0 0 11a5.5 5.5 0 1 0 0-11z" />,
  cross: <path d="M4 4l8 8M12 4l-8 8" />,
  stop: <rect x="4" y="4" width="8" height="8" rx="1" />,
  clock: (
    <>
      <circle cx="8" cy="8" r="5.5" />
      <path d="M8 5v3.2l2.2 1.3" />
    </>
  ),
  arrow: <path d="M3 8h9M9 5l3 3-3 3" />,
};

/**
 * A run's outcome as a badge: its word, an icon and a colour per outcome (never colour alone),
 * with what it means as the tooltip.
 */
export function OutcomeBadge({ outcome, testId }: { outcome: string; testId?: string }) {
  const view = outcomeView(outcome);
  return (
    <span
      className={`outcome outcome-${outcome.replace(/[^a-z_]/gi, "")}`}
      data-testid={testId}
      data-outcome={outcome}
      title={view.description}
    >
      <svg
        className="outcome-icon"
        viewBox="0 0 16 16"
        width="14"
        height="14"
        aria-hidden="true"
        focusable="false"
      >
        {ICONS[view.icon]}
      </svg>
      {view.label}
    </span>
  );
}
