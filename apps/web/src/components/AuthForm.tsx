"use client";

import { useEffect, useState } from "react";
import type { FormEvent } from "react";
import { ErrorNotice } from "@/components/ErrorNotice";
import { browserApi, errorInfo } from "@/lib/client-api";
import type { ApiProblem } from "@/lib/client-api";
import { useHydrated } from "@/lib/hydrated";
import { safeNext } from "@/lib/redirect";

/**
 * Sign in, or create the first admin with the bootstrap token. `sessionEnded`: the browser
 * came with the cookies of a session that is over (the API restarted with a new key, or the
 * session was signed out elsewhere); the form says so and has the API expire them.
 */
export type AuthFormProps =
  | { mode: "login"; next?: string | undefined; sessionEnded?: boolean }
  | { mode: "bootstrap"; token: string };

export function AuthForm(props: AuthFormProps) {
  const [error, setError] = useState<ApiProblem | null>(null);
  const sessionEnded = props.mode === "login" && props.sessionEnded === true;
  useEffect(() => {
    // The page was rendered on the server, whose calls cannot set this browser's cookies:
    // one call from here lets the API expire the ended session's cookies.
    if (sessionEnded)
      void browserApi()
        .auth.status.query()
        .catch(() => undefined);
  }, [sessionEnded]);
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
      setError(errorInfo(e));
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
      {sessionEnded && error === null && (
        <p className="notice" role="status">
          Your session ended; sign in again.
        </p>
      )}
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
        <ErrorNotice problem={error} />
        <button type="submit" className="button primary" disabled={busy}>
          {bootstrap ? "Create admin" : "Sign in"}
        </button>
      </fieldset>
    </form>
  );
}
