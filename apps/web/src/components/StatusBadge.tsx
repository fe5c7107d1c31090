/** A run or receipt status as a coloured badge (the text is the status itself). */
export function StatusBadge({ status, testId }: { status: string; testId?: string }) {
  return (
    <span className={`badge status-${status.replace(/[^a-z_]/gi, "")}`} data-testid={testId}>
      {status}
    </span>
  );
}
