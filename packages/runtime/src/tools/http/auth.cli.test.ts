/**
 * `auth` through the built `runx` executable: a graph runner's declared credential (resolved
 * from the case environment) is delivered to an `http.read` step's bearer binding, admitted
 * only for the credential's audience host, and never appears in the sealed output.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../../testing/cli.js";
import type { Workspace } from "../../testing/cli.js";

const TOKEN = "tok-live-81d3c0ffee";

const xYaml = (host: string): string =>
  [
    "credentials:",
    "  api:",
    "    provider: example",
    "    audience: https://api.example",
    "    auth:",
    "      bearer:",
    "        delivery:",
    "          env: API_TOKEN",
    "runners:",
    "  default:",
    "    type: graph",
    "    credential: api",
    "    graph:",
    "      name: authed-read",
    "      result_from: [read]",
    "      steps:",
    "        - id: read",
    "          tool: http.read",
    "          scopes: [net:http]",
    "          inputs:",
    `            allowed_hosts: [${host}]`,
    "            auth: {type: bearer, secret_env: API_TOKEN}",
    "            requests:",
    "              - id: me",
    `                url: https://${host}/me`,
    "",
  ].join("\n");

const FIXTURE = [
  "name: reads-with-bearer",
  "kind: graph",
  "target: ..",
  "env:",
  `  API_TOKEN: ${TOKEN}`,
  "caller:",
  "  http_responses:",
  '    "https://api.example/me":',
  "      status: 200",
  "      headers: { content-type: application/json }",
  `      body: '{"user":"ada","echo":"${TOKEN}"}'`,
  "expect:",
  "  status: sealed",
  "  output:",
  "    subset:",
  "      http_execution:",
  "        data:",
  "          decision: completed",
  "          responses:",
  "            - id: me",
  "              status: 200",
  "              json: {user: ada, echo: '[redacted-credential]'}",
  "",
].join("\n");

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
  ws.write("skills/authed/SKILL.md", "---\nname: authed\n---\nRead with a credential.\n");
  ws.write("skills/authed/fixtures/reads-with-bearer.yaml", FIXTURE);
});
afterEach(() => ws.cleanup());

describe("http.read auth in a graph run by the runx CLI", () => {
  it("delivers the runner's credential as a bearer token and redacts its echo", async () => {
    ws.write("skills/authed/X.yaml", xYaml("api.example"));
    const r = await runx(ws, ["harness", "skills/authed", "--json"]);
    expect(r.stdout).not.toContain(TOKEN);
    expect(r.code, r.stdout).toBe(0);
  });

  it("refuses a host outside the credential's audience", async () => {
    ws.write("skills/authed/X.yaml", xYaml("other.example"));
    ws.write(
      "skills/authed/fixtures/reads-with-bearer.yaml",
      FIXTURE.replace("api.example/me", "other.example/me").replace(
        /expect:[\s\S]*$/,
        "expect:\n  status: failure\n",
      ),
    );
    const r = await runx(ws, ["harness", "skills/authed", "--json"]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).not.toContain(TOKEN);
    // Without the audience check the read would seal, and the fixture expects a failure.
    ws.write(
      "skills/authed/X.yaml",
      xYaml("other.example").replace("api.example", "other.example"),
    );
    const unbound = await runx(ws, ["harness", "skills/authed", "--json"]);
    expect(unbound.code).not.toBe(0);
  });
});
