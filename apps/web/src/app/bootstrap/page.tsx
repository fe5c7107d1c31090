import type { Metadata } from "next";
import { AuthForm } from "@/components/AuthForm";
import { param } from "@/lib/format";

export const metadata: Metadata = { title: "Create the first admin" };

export default async function BootstrapPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const token = param((await searchParams).token) ?? "";
  return (
    <section className="page narrow">
      <h1>Create the first admin</h1>
      {token === "" ? (
        <p role="alert" className="error">
          This page needs the one-time token from the bootstrap link the API printed at start-up (
          <code>/bootstrap?token=…</code>).
        </p>
      ) : (
        <>
          <p>The one-time token is spent when the admin is created.</p>
          <AuthForm mode="bootstrap" token={token} />
        </>
      )}
    </section>
  );
}
