/**
 * Access to runx's own state through the built CLI: graph skills whose only grants are the
 * filesystem scopes try to read, admit, write and run in `.runx/` (the state database and its
 * WAL, config), the receipt directory and `$RUNX_HOME` (keys) through every path form: plain,
 * `./`/`//` spellings, `..`, absolute, a symlink, `/proc/self/root/…`, a symlinked directory,
 * a hard link and `repo_root`. Each must be refused with its code, and neither the envelope nor
 * any receipt may hold a byte of the file.
 */
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeWorkspace, password, runx } from "./kit.js";
import type { Workspace } from "./kit.js";
import { stateCoverAvailable } from "../packages/runtime/src/process/supervise.js";

/** A secret only the key file holds. */
const KEY_MARKER = "seed-marker-4c1d9e0b7a";
/** Where the test puts `$RUNX_HOME` and the receipt dir: inside the workspace, the hard case. */
const HOME_REL = "home-runx";
const RECEIPTS_REL = "receipts";

const READER = `skill: peek
runners:
  default:
    default: true
    type: graph
    scopes: [fs.read]
    inputs:
      path: { type: string, required: true }
      root: { type: string, default: "." }
    graph:
      name: peek
      steps:
        - id: read
          tool: fs.read
          scopes: [fs.read]
          inputs:
            repo_root: $input.root
            path: $input.path
`;

const ADMITTER = `skill: grab
runners:
  default:
    default: true
    type: graph
    scopes: [fs.read]
    inputs:
      path: { type: string, required: true }
    graph:
      name: grab
      steps:
        - id: admit
          tool: artifact.admit
          scopes: [fs.read]
          inputs:
            path: $input.path
        - id: page
          tool: artifact.read
          scopes: [fs.read]
          inputs:
            artifact_ref: $steps.admit.local_artifact.data.artifact_ref
            encoding: base64
`;

const WRITER = `skill: scribble
runners:
  default:
    default: true
    type: graph
    scopes: [fs.write]
    inputs:
      path: { type: string, required: true }
    graph:
      name: scribble
      steps:
        - id: write
          tool: fs.write
          scopes: [fs.write]
          inputs:
            path: $input.path
            contents: "overwritten by a skill"
`;

const RUNNER = `skill: shell
runners:
  default:
    default: true
    type: graph
    scopes: [process.exec]
    inputs:
      dir: { type: string, required: true }
    graph:
      name: shell
      steps:
        - id: allow-ls
          run: { type: approval }
          inputs:
            gate_id: shell.ls
            reason: list one directory
        - id: ls
          tool: command.execute
          mutation: true
          scopes: [process.exec]
          inputs:
            command: /bin/ls
            cwd: $input.dir
      policy:
        guards:
          - { step: ls, field: allow-ls.approval_decision.data.approved, equals: true }
`;

/** A cli-tool runner whose declared cwd is runx's own state. */
const LISTER = `skill: lister
runners:
  default:
    default: true
    type: cli-tool
    command: /bin/ls
    cwd: ../../.runx
`;

function skillMd(name: string): string {
  return `---\nname: ${name}\ndescription: ${name}\n---\n${name}\n`;
}

let ws: Workspace;
const env = (): Record<string, string> => ({
  RUNX_HOME: join(ws.root, HOME_REL),
  RUNX_RECEIPT_DIR: RECEIPTS_REL,
});

/** Everything a run left that a viewer could see: stdout, stderr and every receipt file. */
function visible(out: { stdout: string; stderr: string }): string {
  const dir = join(ws.root, RECEIPTS_REL);
  const receipts = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .map((f) => readFileSync(join(dir, f), "latin1"))
    : [];
  return [out.stdout, out.stderr, ...receipts].join("\n");
}

/**
 * The refusal a run sealed: its closure summary (`step 'x' failed: CODE: message`); a run that
 * completed yields "completed" so the assertion shows what got through.
 */
function refusal(stdout: string): string {
  const envelope = JSON.parse(stdout) as {
    outcome?: string;
    closure?: { summary?: string };
    result?: unknown;
  };
  if (envelope.outcome !== "failed" && envelope.outcome !== "blocked") {
    return `${envelope.outcome ?? "no outcome"}: ${JSON.stringify(envelope.result).slice(0, 200)}`;
  }
  return envelope.closure?.summary ?? "";
}

/** Byte patterns that would show a state file leaked, raw or base64 (three alignments). */
function leaks(file: Buffer): string[] {
  const head = file.subarray(0, 24);
  const forms = [head.toString("latin1")];
  for (let shift = 0; shift < 3; shift++) {
    forms.push(head.subarray(shift, shift + 18).toString("base64"));
  }
  return forms;
}

beforeAll(async () => {
  ws = makeWorkspace("runx-sec-state-");
  for (const [name, yaml] of [
    ["peek", READER],
    ["grab", ADMITTER],
    ["scribble", WRITER],
    ["shell", RUNNER],
    ["lister", LISTER],
  ] as const) {
    ws.write(`skills/${name}/SKILL.md`, skillMd(name));
    ws.write(`skills/${name}/X.yaml`, yaml);
  }
  ws.write(`${HOME_REL}/keys/registry-publisher.json`, `{"seed":"${KEY_MARKER}"}\n`);
  // An operator puts a password hash into state.sqlite; a run leaves the WAL behind.
  const added = await runx(ws, ["operator", "add", "root-admin", "--role", "admin"], {
    env: env(),
    stdin: `${password()}\n`,
  });
  expect(added.code, added.stderr).toBe(0);
  const warm = await runx(
    ws,
    ["skill", "skills/peek", "--path", "skills/peek/SKILL.md", "--json"],
    {
      env: env(),
    },
  );
  expect(warm.code, warm.stderr).toBe(0);
  expect(existsSync(join(ws.root, ".runx", "state.sqlite"))).toBe(true);
  const db = join(ws.root, ".runx", "state.sqlite");
  symlinkSync(db, join(ws.root, "db-link"));
  symlinkSync(`/proc/self/root${db}`, join(ws.root, "db-proc"));
  symlinkSync(join(ws.root, ".runx"), join(ws.root, "state-dir"));
  mkdirSync(join(ws.root, "copies"));
  linkSync(db, join(ws.root, "copies", "hard.sqlite"));
  linkSync(join(ws.root, HOME_REL, "keys", "registry-publisher.json"), join(ws.root, "hard-key"));
}, 60_000);

afterAll(() => ws.cleanup());

interface Attempt {
  name: string;
  skill: string;
  args: string[];
  /** The file whose bytes must not appear. */
  file: string;
  code: "POLICY_DENIED" | "PATH_ESCAPE";
}

const DB = ".runx/state.sqlite";
const KEY = `${HOME_REL}/keys/registry-publisher.json`;

const attempts: Attempt[] = [
  {
    name: "fs.read of the database",
    skill: "peek",
    args: ["--path", DB],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "fs.read of ./.runx//state.sqlite",
    skill: "peek",
    args: ["--path", "./.runx//state.sqlite"],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "fs.read through a symlink",
    skill: "peek",
    args: ["--path", "db-link"],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "fs.read through /proc/self/root",
    skill: "peek",
    args: ["--path", "db-proc"],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "fs.read through a symlinked directory",
    skill: "peek",
    args: ["--path", "state-dir/state.sqlite"],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "fs.read of a hard link",
    skill: "peek",
    args: ["--path", "copies/hard.sqlite"],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "fs.read with repo_root .runx",
    skill: "peek",
    args: ["--root", ".runx", "--path", "state.sqlite"],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "fs.read with ..",
    skill: "peek",
    args: ["--path", "skills/../.runx/state.sqlite"],
    file: DB,
    code: "PATH_ESCAPE",
  },
  {
    name: "fs.read of the key in $RUNX_HOME",
    skill: "peek",
    args: ["--path", KEY],
    file: KEY,
    code: "POLICY_DENIED",
  },
  {
    name: "fs.read of a hard link to the key",
    skill: "peek",
    args: ["--path", "hard-key"],
    file: KEY,
    code: "POLICY_DENIED",
  },
  {
    name: "artifact.admit of the database",
    skill: "grab",
    args: ["--path", DB],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "artifact.admit of the database's WAL",
    skill: "grab",
    args: ["--path", `${DB}-wal`],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "artifact.admit through a symlink",
    skill: "grab",
    args: ["--path", "db-link"],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "artifact.admit of a hard link",
    skill: "grab",
    args: ["--path", "copies/hard.sqlite"],
    file: DB,
    code: "POLICY_DENIED",
  },
  {
    name: "artifact.admit of the key",
    skill: "grab",
    args: ["--path", KEY],
    file: KEY,
    code: "POLICY_DENIED",
  },
];

describe("a skill cannot read runx's own state", () => {
  it.each(attempts)("$name is refused ($code) and leaks nothing", async (attempt) => {
    const before = readFileSync(join(ws.root, attempt.file));
    const out = await runx(ws, ["skill", `skills/${attempt.skill}`, ...attempt.args, "--json"], {
      env: env(),
    });
    expect(refusal(out.stdout)).toContain(attempt.code);
    const shown = visible(out);
    for (const form of leaks(before)) expect(shown).not.toContain(form);
    expect(shown).not.toContain(KEY_MARKER);
  });
});

describe("a skill cannot write or work in runx's own state", () => {
  const writes = [
    { name: "fs.write into .runx/", path: ".runx/config.json" },
    { name: "fs.write into the receipt dir in the workspace", path: `${RECEIPTS_REL}/forged.json` },
    {
      name: "fs.write into $RUNX_HOME in the workspace",
      path: `${HOME_REL}/keys/registry-publisher.json`,
    },
    { name: "fs.write through a symlinked state directory", path: "state-dir/config.json" },
  ];
  it.each(writes)("$name is refused and writes nothing", async ({ path }) => {
    const target = join(ws.root, path);
    const before = existsSync(target) ? readFileSync(target, "latin1") : undefined;
    const out = await runx(ws, ["skill", "skills/scribble", "--path", path, "--json"], {
      env: env(),
    });
    expect(refusal(out.stdout)).toContain("POLICY_DENIED");
    expect(existsSync(target) ? readFileSync(target, "latin1") : undefined).toBe(before);
  });

  it("a cli-tool runner with cwd in .runx/ is refused and lists nothing", async () => {
    const out = await runx(ws, ["skill", "skills/lister", "--json"], { env: env() });
    expect(`${out.stdout}${out.stderr}`).toContain("cwd is inside runx's own state");
    expect(out.stdout).not.toContain("state.sqlite");
  });

  it.each([".runx", "state-dir", RECEIPTS_REL, `${HOME_REL}/keys`])(
    "command.execute with cwd %s is refused",
    async (dir) => {
      // command.execute needs policy approval, so the graph pauses at its gate first; the
      // approved resume reaches the tool, and containment refuses the cwd there.
      const paused = await runx(ws, ["skill", "skills/shell", "--dir", dir, "--json"], {
        env: env(),
      });
      expect(paused.code, paused.stdout).toBe(2);
      const runId = (JSON.parse(paused.stdout) as { run_id: string }).run_id;
      ws.write("approve-ls.json", JSON.stringify({ approvals: { "shell.ls": true } }));
      const out = await runx(ws, ["resume", runId, "approve-ls.json", "--json"], { env: env() });
      expect(refusal(out.stdout)).toContain("POLICY_DENIED");
      expect(refusal(out.stdout)).toContain("runx's own state");
      expect(out.stdout).not.toContain("state.sqlite");
      expect(out.stdout).not.toContain("registry-publisher");
    },
  );
});

describe("runx never writes its own state through a symlinked directory", () => {
  /** A fresh workspace whose runx-owned directory `rel` is a symlink to a directory outside. */
  async function linkedWorkspace(
    rel: string,
  ): Promise<{ ws: Workspace; outside: string; cleanup: () => void }> {
    const linked = makeWorkspace("runx-sec-linked-");
    linked.write("skills/grab/SKILL.md", skillMd("grab"));
    linked.write("skills/grab/X.yaml", ADMITTER);
    linked.write("notes.txt", "an ordinary workspace file\n");
    // A first run creates .runx/ as runx makes it; then the directory is swapped for a link.
    const warm = await runx(linked, ["skill", "skills/grab", "--path", "notes.txt", "--json"]);
    expect(warm.code, warm.stderr).toBe(0);
    const outside = join(linked.home, "elsewhere");
    mkdirSync(outside);
    const target = join(linked.root, rel);
    rmSync(target, { recursive: true, force: true });
    symlinkSync(outside, target);
    return { ws: linked, outside, cleanup: () => linked.cleanup() };
  }

  it("refuses a symlinked .runx/runs for the artifact store and writes nothing outside", async () => {
    const { ws: linked, outside, cleanup } = await linkedWorkspace(".runx/runs");
    try {
      const out = await runx(linked, ["skill", "skills/grab", "--path", "notes.txt", "--json"]);
      expect(refusal(out.stdout)).toContain("PATH_ESCAPE");
      expect(refusal(out.stdout)).toContain(".runx/runs is a symbolic link");
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      cleanup();
    }
  });

  it.each([".runx/receipts", ".runx"])(
    "refuses a symlinked %s with a clear error and writes nothing outside",
    async (rel) => {
      const { ws: linked, outside, cleanup } = await linkedWorkspace(rel);
      try {
        const out = await runx(linked, ["skill", "skills/grab", "--path", "notes.txt", "--json"]);
        expect(out.code).not.toBe(0);
        expect(`${out.stdout}${out.stderr}`).toContain(`${rel} is a symbolic link`);
        expect(out.stderr).not.toMatch(/\n\s+at /);
        expect(readdirSync(outside)).toEqual([]);
      } finally {
        cleanup();
      }
    },
  );

  it("refuses a symlinked .runx/continuations for a resume document read from stdin", async () => {
    const { ws: linked, outside, cleanup } = await linkedWorkspace(".runx/continuations");
    try {
      const out = await runx(linked, ["resume", "run-missing", "-", "--json"], {
        stdin: JSON.stringify({ answers: {} }),
      });
      expect(out.code).not.toBe(0);
      expect(out.stdout).toContain(".runx/continuations is a symbolic link");
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      cleanup();
    }
  });
});

/**
 * A skill's own processes (a cli-tool, the javascript host, `command.execute`) run as the
 * operator's OS user; where the host allows a private mount namespace the state roots are
 * covered by an empty read-only tmpfs (packages/runtime/src/process/state-cover.ts), so the
 * process sees nothing there by any path form and cannot write there.
 */
describe.skipIf(!stateCoverAvailable())("a skill's processes cannot reach runx's own state", () => {
  /** A cli-tool running `command` with the given args in the workspace root. */
  function processSkill(name: string, command: string, args: string[]): void {
    ws.write(`skills/${name}/SKILL.md`, skillMd(name));
    ws.write(
      `skills/${name}/X.yaml`,
      [
        `skill: ${name}`,
        "runners:",
        "  default:",
        "    default: true",
        "    type: cli-tool",
        `    command: ${command}`,
        `    args: ${JSON.stringify(args)}`,
        '    cwd: "{{env.RUNX_CWD}}"',
        "    inputs:",
        "      path: { type: string, required: true }",
        "",
      ].join("\n"),
    );
  }

  beforeAll(() => {
    processSkill("catter", "cat", ["$input.path"]);
    processSkill("lsr", "ls", ["-la", "$input.path"]);
    processSkill("copier", "cp", ["notes.txt", "$input.path"]);
    // `$0` is the path: the runtime's own /proc entry leads to its (uncovered) root.
    processSkill("parent", "sh", ["-c", 'cat "/proc/$PPID/root$0"', "$input.path"]);
    ws.write("notes.txt", "planted by a skill\n");
  });

  /** Runs a process skill and returns what a viewer could see plus the run's receipts. */
  async function run(
    skill: string,
    path: string,
  ): Promise<{ shown: string; own: string; outcome: string }> {
    const out = await runx(ws, ["skill", `skills/${skill}`, "--path", path, "--json"], {
      env: env(),
    });
    const envelope = JSON.parse(out.stdout) as { outcome?: string };
    return { shown: visible(out), own: out.stdout + out.stderr, outcome: envelope.outcome ?? "" };
  }

  const reads = [
    { name: "cat .runx/state.sqlite", path: DB },
    { name: "cat the database by absolute path", path: "{abs}/.runx/state.sqlite" },
    { name: "cat the database's WAL", path: `${DB}-wal` },
    { name: "cat through a symlink in the workspace", path: "db-link" },
    { name: "cat through a symlinked directory", path: "state-dir/state.sqlite" },
    { name: "cat through /proc/self/root", path: "db-proc" },
    { name: "cat the key in $RUNX_HOME", path: KEY },
    { name: "cat the key by absolute path", path: `{abs}/${KEY}` },
  ];
  it.each(reads)("$name shows none of its bytes", async ({ path }) => {
    const { shown, outcome } = await run("catter", path.replace("{abs}", ws.root));
    expect(shown).not.toContain("SQLite format 3");
    expect(shown).not.toContain(KEY_MARKER);
    expect(outcome).toBe("failed");
    expect(shown).toMatch(/"state_isolation":\s*"mount-namespace"/);
  });

  it("cat through the runtime's /proc/<pid>/root shows none of its bytes", async () => {
    const { shown } = await run("parent", join(ws.root, DB));
    expect(shown).not.toContain("SQLite format 3");
  });

  it.each([".runx", "state-dir/", `${HOME_REL}/keys`])("ls %s lists nothing", async (dir) => {
    // Only this run's envelope: earlier refusals name these files in their receipts.
    const { own } = await run("lsr", dir);
    expect(own).not.toContain("state.sqlite");
    expect(own).not.toContain("registry-publisher");
  });

  it.each([".runx/planted", "state-dir/planted", `${HOME_REL}/keys/planted`])(
    "cp into %s writes nothing",
    async (path) => {
      const { shown, outcome } = await run("copier", path);
      expect(outcome).toBe("failed");
      expect(shown).toContain("Read-only file system");
      expect(existsSync(join(ws.root, path))).toBe(false);
    },
  );

  it("the workspace itself stays readable", async () => {
    const { shown, outcome } = await run("catter", "notes.txt");
    expect(outcome).toBe("completed");
    expect(shown).toContain("planted by a skill");
  });
});
