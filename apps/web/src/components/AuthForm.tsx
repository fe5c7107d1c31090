"use client";

import { useState } from "react";
import type { FormEvent } from "react";
import { browserApi, errorMessage } from "@/lib/client-api";
import { useHydrated } from "@/lib/hydrated";
import { safeNext } from "@/lib/redirect";

/** Sign in, or create the first admin with the bootstrap token. */
export type AuthFormProps =
  { mode: "login"; next?: string | undefined } | { mode: "bootstrap"; token: string };

export function AuthForm(props: AuthFormProps) {
  const [error, setError] = useState<string | null>(null);
  const hydrated = useHydrated();
  const [busy, setBusy] = useState(false);
  const bootstrap = props.mode === "bootstrap";

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (key: string) => {
      const v = form.get(key);
      return typeof v === "string" ? v : "";
    };
    const username = text("username");
    const password = text("password");
    setBusy(true);
    setError(null);
    try {
      if (props.mode === "bootstrap") {
        await browserApi().auth.bootstrap.mutate({ token: props.token, username, password });
      } else {
        await browserApi().auth.login.mutate({ username, password });
      }
      // Only a path on this origin is followed (lib/redirect.ts: no open redirect).
      const next = props.mode === "login" ? props.next : undefined;
      window.location.assign(safeNext(next, window.location.origin));
    } catch (e) {
      setError(errorMessage(e));
      setBusy(false);
    }
  }

  return (
    <form
      method="post"
      className="card auth-form"
      onSubmit={(e) => void submit(e)}
      aria-busy={busy}
    >
      <fieldset className="bare" disabled={!hydrated}>
        <label htmlFor="username">Username</label>
        <input id="username" name="username" autoComplete="username" required autoFocus />
        <label htmlFor="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete={bootstrap ? "new-password" : "current-password"}
          minLength={bootstrap ? 12 : undefined}
          required
        />
        {bootstrap && <p className="hint">At least 12 characters.</p>}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" className="button primary" disabled={busy}>
          {bootstrap ? "Create admin" : "Sign in"}
        </button>
      </fieldset>
    </form>
  );
}
