/**
 * The command catalog: names, usage and help text. Kept free of runtime imports so that
 * `runx --help` and `runx <command> --help` load nothing else.
 */

/** One CLI command's help entry. */
export interface CommandHelp {
  name: string;
  summary: string;
  usage: string[];
  options: Array<[string, string]>;
  notes?: string[];
}

const JSON_OPT: [string, string] = ["-j, --json", "print exactly one JSON document on stdout"];
const RECEIPT_DIR_OPT: [string, string] = [
  "-R, --receipt-dir <dir>",
  "receipt store (default: $RUNX_RECEIPT_DIR, else <workspace>/.runx/receipts)",
];

/** Every command this CLI implements, in help order. */
export const COMMANDS: CommandHelp[] = [
  {
    name: "skill",
    summary: "run a skill package and seal a receipt",
    usage: [
      "runx skill <package-dir|SKILL.md|name> [runner] [--<input> value]... [options]",
      "runx skill <owner/name@version> [runner] [--digest sha256:…] [--registry-dir dir] ...",
      "runx skill inspect <package-dir|SKILL.md|name> [runner] [--profile name] [--json]",
    ],
    options: [
      ["-i, --input <key=value>", "an input; the value is parsed as JSON when it parses"],
      ["--input-json <key=json>", "an input whose value must be valid JSON"],
      ["--<name> <value>", "a direct input flag (e.g. --message hi)"],
      [
        "--inputs <file|->",
        "the whole input object from a workspace JSON file or stdin (64 MiB cap)",
      ],
      [
        "--secret-env <NAME>",
        "deliver env var NAME to the skill as a secret (redacted everywhere)",
      ],
      ["--profile <name>", "the credential profile for the runner's declared credential"],
      ["--package-digest <sha256:…>", "refuse to run unless the package digest matches"],
      ["--allow-spawn", "let adapter runners launch their process (else a dry-run receipt)"],
      ["--digest <sha256:…>", "registry refs: refuse unless the published package digest matches"],
      ["--registry-dir <dir>", "registry root for owner/name@version refs"],
      JSON_OPT,
      RECEIPT_DIR_OPT,
    ],
    notes: [
      "Registry refs are verified (digests, publisher signature, trust tier) and materialised under .runx/registry-step-skills/ before they run.",
      "inspect runs nothing: it reports the runner's inputs and readiness (declared environment names, and the credential: ready with its source, or missing with setup commands), never a value.",
      "Exit status: 0 sealed and closed, 1 failed or refused, 2 paused (needs input/agent/approval), 130 interrupted.",
    ],
  },
  {
    name: "resume",
    summary: "continue a paused run with answers and human approvals",
    usage: ["runx resume <run-id> <answers.json|-> [options]"],
    options: [
      [
        "--package-digest <sha256:…>",
        "refuse unless the paused run is bound to this package digest",
      ],
      [
        "--execution-closure-digest <sha256:…>",
        "refuse unless the run is bound to this closure digest",
      ],
      ["--allow-spawn", "let a resumed adapter dispatch launch its process"],
      JSON_OPT,
      RECEIPT_DIR_OPT,
    ],
    notes: [
      'The document is {"answers": {<request-id>: …}, "approvals": {<gate-id>: true|false|{approved, reason}}}.',
      "Agent or caller work goes under answers; only a human decision under approvals resolves a gate.",
      "A sealed run is terminal. A run whose package or runtime changed since the pause is refused.",
    ],
  },
  {
    name: "history",
    summary: "list sealed receipts and paused runs",
    usage: ["runx history [--detail <run-id|receipt-id>] [--limit n] [options]"],
    options: [
      ["--detail <id>", "inspect one run or receipt"],
      ["--limit <n>", "at most n receipts (default 50)"],
      ["--before <receipt-id>", "the page after that receipt (newest first)"],
      ["--include-internal", "also list child receipts"],
      ["--include-harness", "also list receipts produced by runx harness"],
      JSON_OPT,
      RECEIPT_DIR_OPT,
    ],
  },
  {
    name: "verify",
    summary: "verify the receipt store (tree mode) or one receipt",
    usage: ["runx verify [receipt-id] [--run <run-id>] [--receipt <path|->] [options]"],
    options: [
      ["--run <run-id>", "verify one run's receipt tree, reading only its receipts"],
      [
        "--since <date|instant>",
        "only trees holding a receipt created at or after this UTC date or instant",
      ],
      ["--until <date|instant>", "only trees holding a receipt created at or before this"],
      [
        "--receipt <path|->",
        "verify one receipt file (or stdin, 10 MiB cap) and print its verdict",
      ],
      [
        "--allow-local-development-signatures",
        "accept sig: pseudo signatures when a production verifier is configured",
      ],
      ["--bundle <file>", "verify a console evidence bundle (runx.evidence_bundle.v1) offline"],
      JSON_OPT,
      RECEIPT_DIR_OPT,
    ],
    notes: [
      "Exit status: 0 valid, 3 not valid (the failed check is named), 1 verification could not run.",
      "Production keys: RUNX_RECEIPT_VERIFY_KID + RUNX_RECEIPT_VERIFY_ED25519_PUBLIC_KEY_BASE64.",
    ],
  },
  {
    name: "list",
    summary: "list the workspace's skill packages",
    usage: ["runx list skills [--ok-only|--invalid-only] [options]"],
    options: [
      ["--ok-only", "only packages that parse"],
      ["--invalid-only", "only packages with diagnostics"],
      JSON_OPT,
    ],
  },
  {
    name: "harness",
    summary: "replay a package's harness cases or fixture files in isolated scratch workspaces",
    usage: ["runx harness <package-dir|SKILL.md|fixture.yaml>... [options]"],
    options: [JSON_OPT, RECEIPT_DIR_OPT],
    notes: [
      "Package mode runs the inline harness.cases of X.yaml, then fixtures/*.yaml in file-name order.",
      "Pauses are answered only from caller.answers / caller.approvals; the approval id provider-effect:* approves the pending provider-effect gate.",
      "--json prints the report {status, case_count, assertion_error_count, assertion_errors, case_names, receipt_ids, graph_case_count}; a single standalone fixture that passes prints its sealed receipt (runx.receipt.v1) instead.",
      "Exit status: 0 every case passed, 1 a case failed, 64 usage.",
    ],
  },
  {
    name: "tool",
    summary: "list, search and inspect tools; validate local tool manifests",
    usage: [
      "runx tool list [options]",
      "runx tool search <query> [--source <s>] [options]",
      "runx tool inspect <ref> [--source <s>] [options]",
      "runx tool build <tools/ns/tool>|--all [options]",
    ],
    options: [
      JSON_OPT,
      ["--source <s>", "search/inspect one catalog: native, local (or fixture-mcp, see below)"],
      ["--all", "build: every tools/<namespace>/<tool> of the workspace"],
    ],
    notes: [
      "search matches name, summary and tags case-insensitively across native, local (RUNX_TOOL_ROOTS and tools/) and enabled catalogs (at most 20 results).",
      "inspect resolves a ref to a local tool under RUNX_TOOL_ROOTS (<root>/<ns>/<tool>/manifest.json), then the workspace's tools/, then a native tool; native --json prints input_schema and output_schema. Graph steps (tool: ns.tool) and agents' allowed_tools resolve local tools the same way.",
      "build is read-only: it validates runx.tool.manifest.v1 and reports source_hash and schema_hash (runx.tool.build.v1); exit 1 when a manifest is invalid.",
      "RUNX_ENABLE_FIXTURE_TOOL_CATALOG=1 adds the fixture-mcp test catalog (fixture.echo).",
      "Exit status: 0 ok, 1 unknown tool (TOOL_NOT_FOUND), invalid manifest (TOOL_MANIFEST_INVALID) or failed build, 64 usage.",
    ],
  },
  {
    name: "data",
    summary: "operate the governed data store: migrate a SQLite store, list sources, tail a stream",
    usage: [
      "runx data migrate --database <path> --source <ref> [--backup <path>] [options]",
      "runx data sources [options]",
      "runx data tail <data_source_ref> <resource> <aggregate_id> [--limit N] [options]",
    ],
    options: [
      ["--database <path>", "migrate: workspace-relative SQLite event store"],
      ["--source <ref>", "migrate: data_source_ref for rows that carry none"],
      [
        "--backup <path>",
        "migrate: backup path (default <database>.v0.backup.sqlite; must not exist)",
      ],
      ["--limit <n>", "tail: newest events to show, 1-500 (default 20)"],
      JSON_OPT,
    ],
    notes: [
      "migrate takes an exclusive lock, backs up a recognised legacy store before changing it, answers 'current' for a v1 store, and leaves anything else byte-identical.",
      "Exit status: 0 ok, 1 refused or failed, 64 usage.",
    ],
  },
  {
    name: "config",
    summary: "set, read and list user configuration (managed agent provider, model, API key)",
    usage: [
      "runx config set <key> <value>",
      "runx config set api-key --from-stdin",
      "runx config get <key> [--json]",
      "runx config list [--json]",
      "runx config unset <key>",
    ],
    options: [
      [
        "--from-stdin",
        "read the value from stdin (one trailing newline is trimmed); required for secrets",
      ],
      JSON_OPT,
    ],
    notes: [
      "Keys: provider (agent.provider), model (agent.model), base-url (agent.base_url, default https://api.openai.com/v1 for openai), api-key (agent.api_key, secret).",
      "Stored in $RUNX_HOME/config.json with mode 0600. Secret values are accepted only on stdin and shown as ******** by get and list.",
      "Example: printf '%s' \"$OPENAI_API_KEY\" | runx config set agent.api_key --from-stdin",
    ],
  },
  {
    name: "credential",
    summary: "store, list, remove and bind credential profiles for skills' declared credentials",
    usage: [
      "runx credential set <provider> --profile <name> [--auth-mode <mode>] [--audience <https-url>] --from-stdin",
      "runx credential list [--json]",
      "runx credential remove <profile>",
      "runx credential bind <profile> --provider <provider>",
      "runx credential bind <profile> --skill <skill> --credential <credential>",
    ],
    options: [
      ["--profile <name>", "the profile to store (set)"],
      ["--auth-mode <mode>", "the auth mode the material is for (default api_key)"],
      ["--audience <https-url>", "bind the material to one HTTPS host"],
      ["--from-stdin", "read the material from stdin (required: material is never an argument)"],
      ["--provider <provider>", "bind: every requirement for this provider in the project"],
      ["--skill <skill> --credential <name>", "bind: one skill's named requirement (wins)"],
      JSON_OPT,
    ],
    notes: [
      "Material is encrypted under $RUNX_HOME/keys/ (files 0600, directory 0700); profiles and provider defaults are in $RUNX_HOME/config.json. set makes the profile its provider's default.",
      "Project bindings live in <workspace>/.runx/credentials.json and hold profile names only.",
      "Resolution for a runner's credential: runx skill --profile, project binding, provider default, then the declared env name from the process env or the workspace .env.",
      "Example: printf '%s' \"$NITROSEND_API_KEY\" | runx credential set nitrosend --profile account-one --from-stdin",
    ],
  },
  {
    name: "kernel",
    summary: "evaluate one kernel decision (admission, scopes, retry, graph planning) as JSON",
    usage: ["runx kernel eval --input <file|-> --json"],
    options: [
      ["--input <file|->", "a kernel fixture ({input, expected}) or a bare {kind, ...} input"],
      JSON_OPT,
    ],
    notes: [
      "Kinds: policy.admitLocalSkill, policy.admitRetryPolicy, policy.admitGraphStepScopes, policy.buildLocalScopeAdmission, policy.buildAuthorityProofMetadata, policy.validateCredentialBinding, policy.evaluatePublicPullRequestCandidate, policy.evaluatePublicCommentOpportunity, policy.normalizePublicWorkPolicy, state-machine.createSingleStepState, state-machine.transitionSingleStep, state-machine.createSequentialGraphState, state-machine.planSequentialGraphTransition, state-machine.transitionSequentialGraph, state-machine.evaluateFanoutSync, state-machine.fanoutSyncDecisionKey.",
      'Prints {"status":"success","result":<decision>}; a malformed input prints the failure envelope with code kernel.fixture.evaluation_failed naming the field.',
      "The decisions come from the same policy and graph modules runx skill uses. --json is required.",
      "Exit status: 0 evaluated, 1 evaluation failed or unreadable input, 64 usage.",
    ],
  },
  {
    name: "parser",
    summary: "evaluate parser requests (SKILL.md, runner manifest, graph, skill install)",
    usage: ["runx parser eval --input <request.json|-> [options]"],
    options: [["--input <path|->", "the request document (or stdin, 10 MiB cap)"], JSON_OPT],
    notes: [
      'Request: {"inputs": [{"kind": "parser.validateGraphYaml", "yaml": "..."}], "returnErrors": true} (also {"input": {...}} or one input).',
      "Kinds: parser.validateSkillMarkdown (markdown), parser.validateRunnerManifestYaml (yaml), parser.validateGraphYaml (yaml), parser.validateSkillInstall (markdown, origin).",
      'Answer: {"status": "success", "result": {"kind": "output", "value": ...}}; with returnErrors each value is {status: success, value} or {status: failure, error: {code, message}}.',
      "Error codes: parse_error, validation_error, invalid_input, invalid_document. Exit status: 0 answered, 1 the request failed, 64 usage.",
    ],
  },
  {
    name: "adapter",
    summary: "list and trust adapter definitions; show or cancel a run's dispatch attempts",
    usage: [
      "runx adapter list [options]",
      "runx adapter trust <id> [options]",
      "runx adapter attempts <run-id> [options]",
      "runx adapter cancel <run-id> [options]",
    ],
    options: [JSON_OPT],
    notes: [
      "Definitions live in adapters/<id>.yaml; trust is local (.runx/adapters/trust.json) and pins the definition and payload digest.",
    ],
  },
  {
    name: "init",
    summary: "create the project's .runx/ state directory and skills/",
    usage: ["runx init [-g|--global] [options]"],
    options: [["-g, --global", "initialise $RUNX_HOME instead of the project"], JSON_OPT],
  },
  {
    name: "new",
    summary:
      "create a skill package: agent-proposed from an objective, or a fixed starting package",
    usage: [
      "runx new <name> --objective <text> [--directory <dir>] [options]",
      "runx new <name> [--directory <dir>] [options]",
    ],
    options: [
      ["--objective <text>", "what the skill is for; skill-lab's agent acts propose the package"],
      ["--directory <dir>", "target directory inside the workspace (default <workspace>/<name>)"],
      JSON_OPT,
      RECEIPT_DIR_OPT,
    ],
    notes: [
      "With --objective, runs the bundled skill-lab build graph: a configured managed agent (runx config set agent.*) proposes the package and runx.skill.plan/bind/apply validate and write it; without one the run pauses needs_agent (exit 2) for runx resume.",
      "Without --objective, writes a declarative package: one graph runner digests --message through data.digest, with one harness case.",
      "The target must be inside the workspace, not a symlink, and absent or empty; nothing is written otherwise.",
      "--json prints the run envelope with --objective, else {status, new: {action, name, directory, files, next_steps}}.",
    ],
  },
  {
    name: "operator",
    summary: "create an operator account for the console (password read from stdin)",
    usage: ["runx operator add <username> --role <viewer|approver|admin> [options]"],
    options: [["--role <role>", "viewer, approver or admin"], JSON_OPT],
    notes: ["The password is one line on stdin (12+ characters); it is never echoed."],
  },
  {
    name: "registry",
    summary: "package, publish, search and read skills in the local registry",
    usage: [
      "runx registry package <dir> [--owner o] [--version v] [options]",
      "runx registry publish <dir> --owner <o> [--version v] [--trust-tier t] [--upsert] [options]",
      "runx registry search <query> [--limit n] [options]",
      "runx registry read|resolve <owner/name[@version]> [options]",
      "runx registry install <owner/name@version> [--to dir] [--digest sha256:…] [options]",
    ],
    options: [
      ["--registry-dir <dir>", "registry root (also --registry <path|file://…>)"],
      ["--owner <o>", "publisher owner slug (lowercase letters, digits, -)"],
      [
        "--version <v>",
        "version (default: X.yaml version, else sha-<12 hex of the package digest>)",
      ],
      [
        "--trust-tier <t>",
        "community (default), verified or first_party; the key must be trusted for it",
      ],
      ["--upsert", "replace a published version whose content changed"],
      ["--limit <n>", "search: at most n results (default 20)"],
      JSON_OPT,
    ],
    notes: [
      "Registry root: --registry-dir > RUNX_REGISTRY_DIR > $RUNX_HOME/registry; records live at <root>/<owner>/<name>/<version>.json.",
      "package prints the exact file set and digests and writes nothing. publish signs with the publisher key (RUNX_REGISTRY_PUBLISHER_KID + RUNX_REGISTRY_PUBLISHER_ED25519_SEED_BASE64, else $RUNX_HOME/keys/registry-publisher.json, created on first publish).",
      "Readers accept signatures from RUNX_REGISTRY_TRUSTED_KEYS (<kid>:<public key base64>[:tier], comma-separated) and the local publisher key (community).",
      "Refused with nothing written: tampered content (digest mismatch), unsigned or unknown-key records, tiers above the key's trust, entries with .., absolute paths or symlinks, secret-looking files.",
    ],
  },
  {
    name: "add",
    summary: "materialise a verified registry package into a skills folder",
    usage: ["runx add <owner/name@version> [--to dir] [--digest sha256:…] [options]"],
    options: [
      ["--to <dir>", "destination root (default <workspace>/skills); writes <dir>/<owner>/<name>/"],
      ["--digest <sha256:…>", "refuse unless the package digest equals this"],
      ["--version <v>", "the version, when the ref has none"],
      [
        "--registry-dir <dir>",
        "registry root (default RUNX_REGISTRY_DIR, else $RUNX_HOME/registry)",
      ],
      JSON_OPT,
    ],
    notes: [
      "An existing destination with the same package digest is left alone (status unchanged); different content is refused.",
    ],
  },
  {
    name: "mcp",
    summary: "serve skills as MCP tools over stdio or streamable HTTP",
    usage: ["runx mcp serve <skill-ref>... [--runner r] [--http [--host h] [--port n]] [options]"],
    options: [
      ["--runner <r>", "the runner every served skill uses (default: each package's default)"],
      ["--http", "serve streamable HTTP at /mcp instead of stdio"],
      ["--host <h>", "HTTP host (default 127.0.0.1; non-loopback needs --allow-non-loopback)"],
      ["--port <n>", "HTTP port (default 8765; 0 picks a free port)"],
      ["--allow-non-loopback", "allow a non-loopback --host"],
      ["--registry-dir <dir>", "registry root for owner/name@version refs"],
      RECEIPT_DIR_OPT,
    ],
    notes: [
      "One tool per skill; its input schema comes from the runner's inputs. Results carry the run envelope in structuredContent.runx.",
      "Every call runs through the same runtime as runx skill, pinned to the package and closure digests bound at start-up, and seals receipts.",
      "A paused run returns its requests; approvals are never resolved through MCP (use runx resume).",
      "HTTP prints a random bearer token on stderr; every request needs Authorization: Bearer <token>.",
    ],
  },
];

/** Renders the top-level help. */
export function topLevelHelp(version: string): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    `runx ${version} — a governed skill runtime`,
    "",
    "Usage: runx <command> [arguments] [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Global options:",
    "  -h, --help     show help (also: runx <command> --help)",
    "  -V, --version  print the version",
    "  -j, --json     machine-readable output",
    "",
  ].join("\n");
}

/** Renders one command's help. */
export function commandHelp(c: CommandHelp): string {
  const width = Math.max(...c.options.map(([f]) => f.length));
  return [
    `runx ${c.name} — ${c.summary}`,
    "",
    "Usage:",
    ...c.usage.map((u) => `  ${u}`),
    "",
    "Options:",
    ...c.options.map(([f, d]) => `  ${f.padEnd(width)}  ${d}`),
    "  -h, --help".padEnd(width + 2) + "  show this help",
    ...(c.notes !== undefined ? ["", ...c.notes] : []),
    "",
  ].join("\n");
}
