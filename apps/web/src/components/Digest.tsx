import { shortDigest } from "@/lib/format";

/** A digest, shortened for reading with the full value in the title and for copy. */
export function Digest({ value }: { value: string | null | undefined }) {
  if (!value) return <span>—</span>;
  return (
    <code className="digest" title={value}>
      {shortDigest(value)}
    </code>
  );
}
