import type { ReactNode } from "react";

/**
 * A wide table's scroll container: on a narrow screen the table scrolls inside it instead of
 * widening the page. It is a named, focusable region so a keyboard user can scroll it too
 * (axe's scrollable-region-focusable rule).
 */
export function TableWrap({
  label,
  className,
  children,
}: {
  label: string;
  /** Extra classes beside `table-wrap` (spacing of one page's table). */
  className?: string;
  children: ReactNode;
}) {
  return (
    <div
      className={className === undefined ? "table-wrap" : `table-wrap ${className}`}
      role="region"
      aria-label={label}
      tabIndex={0}
    >
      {children}
    </div>
  );
}
