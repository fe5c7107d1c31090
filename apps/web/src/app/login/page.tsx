import type { Metadata } from "next";
import Link from "next/link";
import { AuthForm } from "@/components/AuthForm";
import { param } from "@/lib/format";
import { PATH_BASE, safeNext } from "@/lib/redirect";
import { serverApi } from "@/lib/server-api";

export const metadata: Metadata = { title: "Sign in" };

/** Whether the first admin is still to be created, and whether this browser's session ended. */
async function status(): Promise<{ bootstrapRequired: boolean; sessionEnded: boolean }> {
  try {
    return await (await serverApi()).auth.status.query();
  } catch {
    return { bootstrapRequired: false, sessionEnded: false };
  }
}

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const next = safeNext(param((await searchParams).next), PATH_BASE);
  const { bootstrapRequired: needsBootstrap, sessionEnded } = await status();
  return (
    <section className="page narrow">
      <h1>Sign in</h1>
      {needsBootstrap && (
        <p className="notice">
          No operator exists yet. Open the <Link href="/bootstrap">bootstrap link</Link> the API
          printed when it started to create the first admin.
        </p>
      )}
      <AuthForm mode="login" next={next} sessionEnded={sessionEnded} />
    </section>
  );
}
