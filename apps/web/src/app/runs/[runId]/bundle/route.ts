/**
 * GET /runs/<id>/bundle: the run's evidence bundle (`runx.evidence_bundle.v1`) as a JSON
 * download, passed through from the API's `GET /bundle/<id>` (with the visitor's cookies) as
 * it is written, so a run of tens of thousands of receipts is never held here whole.
 */
import { headers } from "next/headers";
import { apiBaseUrl } from "@/lib/server-api";

export async function GET(_request: Request, ctx: { params: Promise<{ runId: string }> }) {
  const runId = decodeURIComponent((await ctx.params).runId);
  const cookie = (await headers()).get("cookie");
  let upstream: Response;
  try {
    upstream = await fetch(`${apiBaseUrl()}/bundle/${encodeURIComponent(runId)}`, {
      headers: cookie !== null ? { cookie } : {},
      cache: "no-store",
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return Response.json({ error: message }, { status: 502 });
  }
  if (!upstream.ok || upstream.body === null) {
    // The API's refusal names what is wrong (tRPC's error shape).
    const problem = (await upstream.json().catch(() => null)) as {
      error?: { message?: string };
    } | null;
    const message = problem?.error?.message ?? `the API answered ${upstream.status}`;
    return Response.json({ error: message }, { status: upstream.status });
  }
  const safe = runId.replace(/[^A-Za-z0-9_-]/g, "_");
  return new Response(upstream.body, {
    headers: {
      "content-type": "application/json; charset=utf-8",
      "content-disposition": `attachment; filename="evidence-${safe}.json"`,
      "cache-control": "no-store",
    },
  });
}
