/** A page-level failure to load from the API. */
export function ApiError({ title, error }: { title: string; error: string }) {
  return (
    <section className="page">
      <h1>{title}</h1>
      <p role="alert" className="error">
        {error}
      </p>
    </section>
  );
}
