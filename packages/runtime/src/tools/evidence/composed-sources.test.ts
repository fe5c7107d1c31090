/**
 * evidence.index_sources over the packets the real web.fetch and fs.read tools return (a
 * loopback HTTP server and a temp workspace), then evidence.verify_artifact over the index:
 * the packet shapes the evidence tools read are the ones this runtime produces.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fsReadTool } from "../fs/read.js";
import { startTestServer, type TestServer } from "../../testing/http-server.js";
import { createHttpTransport } from "../http/http-transport.js";
import { makeLayoutContext, successOutput } from "../../testing/tool-context.js";
import type { JsonRecord } from "../types.js";
import { webFetchTool } from "../web/fetch.js";
import { evidenceIndexSourcesTool } from "./index-sources.js";
import { evidenceVerifyArtifactTool } from "./verify-artifact.js";

let server: TestServer | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe("evidence tools over real tool packets", () => {
  it("indexes a web.fetch result and an fs.read result and verifies a claim citing both", async () => {
    server = await startTestServer((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end("<html><body><p>The API rate limit is 100 requests per minute.</p></body></html>");
    });
    const { layout, ctx } = makeLayoutContext({
      http: createHttpTransport(),
      allowPrivateNetwork: true,
      scopes: ["fs.read", "runx:evidence:read"],
    });
    cleanups.push(() => layout.cleanup());
    writeFileSync(join(layout.workspace, "limits.md"), "Burst limit: 20 requests.\n");

    const fetched = successOutput(
      await webFetchTool().execute({ url: `${server.origin}/limits` }, ctx),
    );
    const read = successOutput(await fsReadTool.execute({ path: "limits.md" }, ctx));
    const indexed = successOutput(
      await evidenceIndexSourcesTool.execute(
        { objective: "document the rate limits", source_packets: [fetched, read] },
        ctx,
      ),
    );
    const index = indexed.source_index as JsonRecord;
    expect(index).toMatchObject({ decision: "ready", blockers: [] });
    const sources = index.sources as JsonRecord[];
    expect(sources.map((s) => [s.source_kind, s.source_ref])).toEqual([
      ["fetch", `${server.origin}/limits`],
      ["local_file", "file:limits.md"],
    ]);
    expect(sources[0]?.extracted).toContain("100 requests per minute");

    const digests = index.source_digests as string[];
    const verified = successOutput(
      await evidenceVerifyArtifactTool.execute(
        {
          candidate: { decision: "ready", summary: "100/min, bursts of 20." },
          source_digests: digests,
          claim_bindings: [
            { claim: "100 requests per minute, bursts of 20", source_digests: digests },
          ],
        },
        ctx,
      ),
    );
    expect(verified.verification).toMatchObject({
      status: "pass",
      admitted_source_digests: digests,
    });
  });
});
