"use client";

import { useSyncExternalStore } from "react";

const subscribe = (): (() => void) => () => undefined;

/**
 * False during server rendering and hydration, true once React owns the page. Forms keep
 * their controls disabled until then: before hydration a click submits the raw HTML form (a
 * GET that would put a typed password in the URL) and typed text never reaches React's state.
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
}
