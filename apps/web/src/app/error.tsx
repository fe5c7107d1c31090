"use client";

export default function ErrorPage({ error, reset }: { error: Error; reset: () => void }) {
  return (
    <section className="page">
      <h1>Something went wrong</h1>
      <p role="alert" className="error">
        {error.message || "The console could not load this page."}
      </p>
      <button type="button" className="button" onClick={reset}>
        Try again
      </button>
    </section>
  );
}
