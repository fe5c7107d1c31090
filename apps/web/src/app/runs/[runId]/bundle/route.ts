/**
 * GET /runs/<id>/bundle: the run's evidence bundle (`runx.evidence_bundle.v1`) as a JSON
 * download, fetched from the API with the visitor's cookies.
 */
import { errorStatus, serverApi } from "@/lib/server-api";

export async function GET(_request: Request, ctx: { params: Promise<{ runId: string }> }) {
  const runId = decodeURIComponent((await ctx.params).runId);
  try {
    const bundle = await (await serverApi()).receipts.bundle.query({ runId });
    const safe = runId.replace(/[^A-Za-z0-9_-]/g, "_");
    return new Response(`${JSON.stringify(bundle, null, 2)}\n`, {
      headers: {
        "content-type": "application/json; charset=utf-8",
        "content-disposition": `attachment; filename="evidence-${safe}.json"`,
        "cache-control": "no-store",
      },
    });
  } catch (error) {
    const status = errorStatus(error) ?? 502;
    const message = error instanceof Error ? error.message : String(error);
    return Response.json({ error: message }, { status });
  }
}
