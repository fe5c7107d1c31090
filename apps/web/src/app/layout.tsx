import type { Metadata } from "next";
import type { ReactNode } from "react";
import { cookies } from "next/headers";
import Link from "next/link";
import "./globals.css";
import "./styles/outcomes.css";
import "./styles/answers.css";
import "./styles/approvals.css";
import "./styles/operators.css";
import "./styles/timeline.css";
import { ThemeToggle } from "@/components/ThemeToggle";
import { SignOutButton } from "@/components/SignOutButton";
import { serverApi } from "@/lib/server-api";
import type { Operator } from "@/lib/api-types";

export const metadata: Metadata = {
  title: { default: "runx console", template: "%s · runx console" },
  description: "Operator console for runx: runs, approvals, receipts and skills",
};

async function whoami(): Promise<Operator | null> {
  try {
    const api = await serverApi();
    return (await api.auth.status.query()).operator;
  } catch {
    return null; // API down or session invalid: pages report it themselves
  }
}

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = (await cookies()).get("runx_theme")?.value;
  const operator = await whoami();
  return (
    <html lang="en" data-theme={theme === "dark" || theme === "light" ? theme : undefined}>
      <body>
        <a className="skip-link" href="#main">
          Skip to content
        </a>
        <header className="site-header">
          <Link href="/runs" className="brand">
            runx <span>console</span>
          </Link>
          {operator && (
            <nav aria-label="Main" className="main-nav">
              <Link href="/runs">Runs</Link>
              <Link href="/approvals">Approvals</Link>
              <Link href="/skills">Skills</Link>
              {operator.role === "admin" && <Link href="/operators">Operators</Link>}
            </nav>
          )}
          <div className="header-end">
            {operator && (
              <>
                <span data-testid="whoami" className="whoami">
                  Signed in as {operator.username} ({operator.role})
                </span>
                <SignOutButton />
              </>
            )}
            <ThemeToggle />
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          {children}
        </main>
      </body>
    </html>
  );
}
