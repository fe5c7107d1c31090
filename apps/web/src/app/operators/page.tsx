import type { Metadata } from "next";
import { ApiError } from "@/components/ApiError";
import { OperatorsAdmin } from "@/components/OperatorsAdmin";
import { load } from "@/lib/server-api";

export const metadata: Metadata = { title: "Operators" };

/** Operators: admins list, add, disable and re-role them; anyone else is told who can. */
export default async function OperatorsPage() {
  const me = await load((api) => api.auth.me.query());
  if (!me.ok) return <ApiError title="Operators" error={me.error} problem={me.problem} />;
  if (me.value.role !== "admin") {
    return (
      <section className="page narrow">
        <h1>Operators</h1>
        <p className="notice" role="status" data-testid="admins-only">
          Only admins manage operators. You are signed in as {me.value.username} with the{" "}
          {me.value.role} role; ask an admin to add an operator or to change a role.
        </p>
      </section>
    );
  }
  const listed = await load((api) => api.auth.listOperators.query());
  if (!listed.ok)
    return <ApiError title="Operators" error={listed.error} problem={listed.problem} />;
  return (
    <section className="page">
      <h1>Operators</h1>
      <p className="muted">
        Who may use this console, and with which role. A role change applies from the
        operator&apos;s next request; disabling ends their sessions and API tokens. The last enabled
        admin cannot be disabled or given another role.
      </p>
      <OperatorsAdmin operators={listed.value} me={me.value.username} />
    </section>
  );
}
