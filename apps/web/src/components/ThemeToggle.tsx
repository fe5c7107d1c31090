"use client";

/** Flips between light and dark (overriding prefers-color-scheme) and remembers it in a cookie. */
export function ThemeToggle() {
  function toggle() {
    const root = document.documentElement;
    const current =
      root.dataset.theme ??
      (window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light");
    const next = current === "dark" ? "light" : "dark";
    root.dataset.theme = next;
    document.cookie = `runx_theme=${next}; path=/; max-age=31536000; samesite=strict`;
  }
  return (
    <button type="button" className="button ghost" onClick={toggle}>
      Toggle theme
    </button>
  );
}
