"use client";

import { useState } from "react";
import { browserApi, errorMessage } from "@/lib/client-api";
import { useHydrated } from "@/lib/hydrated";

/** Ends the session and returns to the sign-in page. */
export function SignOutButton() {
  const [error, setError] = useState<string | null>(null);
  const hydrated = useHydrated();
  async function signOut() {
    try {
      await browserApi().auth.logout.mutate();
      window.location.assign("/login");
    } catch (e) {
      setError(errorMessage(e));
    }
  }
  return (
    <>
      <button
        type="button"
        className="button ghost"
        onClick={() => void signOut()}
        disabled={!hydrated}
      >
        Sign out
      </button>
      {error && (
        <span role="alert" className="error-inline">
          {error}
        </span>
      )}
    </>
  );
}
