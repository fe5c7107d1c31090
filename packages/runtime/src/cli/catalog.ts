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
    usage: ["runx skill <package-dir|SKILL.md|name> [runner] [--<input> value]... [options]"],
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
      ["--package-digest <sha256:…>", "refuse to run unless the package digest matches"],
      JSON_OPT,
      RECEIPT_DIR_OPT,
    ],
    notes: [
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
      ["--include-internal", "also list child receipts"],
      ["--include-harness", "also list receipts produced by runx harness"],
      JSON_OPT,
      RECEIPT_DIR_OPT,
    ],
  },
  {
    name: "verify",
    summary: "verify the receipt store (tree mode) or one receipt",
    usage: ["runx verify [receipt-id] [--receipt <path|->] [options]"],
    options: [
      [
        "--receipt <path|->",
        "verify one receipt file (or stdin, 10 MiB cap) and print its verdict",
      ],
      [
        "--allow-local-development-signatures",
        "accept sig: pseudo signatures when a production verifier is configured",
      ],
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
      "Exit status: 0 every case passed, 1 a case failed, 64 usage.",
    ],
  },
  {
    name: "tool",
    summary: "list and inspect the native tools (fs, command, http, provider, artifact)",
    usage: ["runx tool list [options]", "runx tool inspect <name> [options]"],
    options: [JSON_OPT],
    notes: [
      "inspect --json prints the tool's contract: name, description, mutating, scopes, input_schema, output_schema.",
      "Exit status: 0 ok, 1 unknown tool (TOOL_NOT_FOUND), 64 usage.",
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
    name: "init",
    summary: "create the project's .runx/ state directory and skills/",
    usage: ["runx init [-g|--global] [options]"],
    options: [["-g, --global", "initialise $RUNX_HOME instead of the project"], JSON_OPT],
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
