/**
 * The reusable conformance pack run against the two adapters this
 * repository ships for tests: fake-local (through its `complete` mode) and prompt-report, a
 * plain command adapter with no test modes (prompt on stdin, packet path as an argument, a JSON
 * definition). A real adapter wrapper is certified the same way, in read-only mode, before it
 * may be granted `edit_worktree`.
 */
import { cpSync } from "node:fs";
import { join } from "node:path";
import { describeAdapterConformance } from "../testing/adapter-conformance.js";
import { REPO_ROOT } from "../testing/cli.js";
import { FAKE_LOCAL_DIR } from "./test-support.js";

const nodeVersion = (version: string): string => `v${version}\n`;

describeAdapterConformance({
  id: "fake-local",
  install: (root) => cpSync(FAKE_LOCAL_DIR, join(root, "adapters"), { recursive: true }),
  lane: "plain-agent",
  inputs: { fixture_mode: "complete" },
  probeOutput: nodeVersion,
});

describeAdapterConformance({
  id: "prompt-report",
  install: (root) =>
    cpSync(
      join(REPO_ROOT, "packages", "runtime", "fixtures", "conformance-adapters"),
      join(root, "adapters"),
      { recursive: true },
    ),
  lane: "plain-agent",
  workflow: "plan",
  probeOutput: nodeVersion,
});
