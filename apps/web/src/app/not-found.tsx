import Link from "next/link";

export default function NotFound() {
  return (
    <section className="page">
      <h1>Not found</h1>
      <p>There is nothing at this address (or the API does not know this id).</p>
      <p>
        <Link href="/runs">Back to runs</Link>
      </p>
    </section>
  );
}
