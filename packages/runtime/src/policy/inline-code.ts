/**
 * Detection of cli-tool invocations that evaluate inline code, used by the
 * `strict_cli_tool_inline_code` policy. Pure: argv in, finding out. Looks through `env`
 * wrappers and path prefixes; a flag counts only where the interpreter would read it as its
 * own option (before the script or `--`), so `node script.js -e` is not a hit.
 */
import { RuntimeError } from "../errors.js";

/** The interpreter and the flag (as written) that make an argv evaluate inline code. */
export interface InlineCodeFinding {
  interpreter: string;
  flag: string;
}

type Detector = (args: readonly string[]) => string | null;

/** `/usr/bin/Python3.11.exe` → `python3.11`. */
function interpreterName(command: string): string {
  const base = command.split(/[\\/]/).pop() ?? command;
  return base.toLowerCase().replace(/\.exe$/, "");
}

/** How an interpreter reads one option token. */
type Verdict = "hit" | "takes-value" | "ends-options" | "plain";

/** Walks interpreter options up to the first operand and returns the first inline-code flag. */
function scanOptions(args: readonly string[], classify: (token: string) => Verdict): string | null {
  for (let i = 0; i < args.length; i++) {
    const token = args[i] ?? "";
    if (token === "--" || token === "-" || !/^[-+]/.test(token)) return null;
    const verdict = classify(token);
    if (verdict === "hit") return token;
    if (verdict === "ends-options") return null;
    if (verdict === "takes-value") i++;
  }
  return null;
}

interface ClusterRules {
  /** Letters that evaluate code. */
  hit: string;
  /** Letters whose value is the rest of the token, or the next token when nothing follows. */
  value?: string;
  /** Letters after which everything belongs to a program (e.g. python `-m`). */
  end?: string;
  /** Letters followed by optional digits (perl `-l`, `-0`). */
  digits?: string;
}

/** Reads a single-dash cluster such as `-lne` or `-Wignore` letter by letter. */
function clusterVerdict(token: string, rules: ClusterRules): Verdict {
  if (!/^-[A-Za-z0-9]/.test(token) || token.startsWith("--")) return "plain";
  for (let i = 1; i < token.length; i++) {
    const letter = token[i] ?? "";
    if (rules.hit.includes(letter)) return "hit";
    if (rules.end?.includes(letter) === true) return "ends-options";
    if (rules.value?.includes(letter) === true)
      return i === token.length - 1 ? "takes-value" : "plain";
    if (rules.digits?.includes(letter) === true) {
      while (/[0-9]/.test(token[i + 1] ?? "")) i++;
    }
  }
  return "plain";
}

const NODE_VALUE_OPTIONS = new Set([
  "-r",
  "--require",
  "--import",
  "--loader",
  "--experimental-loader",
  "-C",
  "--conditions",
  "--input-type",
  "--title",
  "--env-file",
  "--inspect-port",
  "--redirect-warnings",
]);
const NODE_EVAL = new Set(["-e", "--eval", "-p", "--print", "-pe", "-ep"]);

const node: Detector = (args) =>
  scanOptions(args, (t) =>
    NODE_EVAL.has(t) || /^--(eval|print)=/.test(t)
      ? "hit"
      : NODE_VALUE_OPTIONS.has(t)
        ? "takes-value"
        : "plain",
  );

const bun: Detector = (args) =>
  // bun takes subcommands (`bun run x`), so its eval flags may follow one.
  args.find((t) => ["-e", "--eval", "-p", "--print"].includes(t) || /^--(eval|print)=/.test(t)) ??
  null;

const deno: Detector = (args) => {
  const operand = args.find((t) => !t.startsWith("-"));
  return operand === "eval" ? "eval" : null;
};

const python: Detector = (args) =>
  scanOptions(args, (t) =>
    t === "--check-hash-based-pycs"
      ? "takes-value"
      : clusterVerdict(t, { hit: "c", value: "WX", end: "m" }),
  );

const ruby: Detector = (args) =>
  scanOptions(args, (t) => clusterVerdict(t, { hit: "e", value: "rIECFKx" }));

const perl: Detector = (args) =>
  scanOptions(args, (t) => clusterVerdict(t, { hit: "eE", value: "IMmixdDV", digits: "l0C" }));

const lua: Detector = (args) =>
  scanOptions(args, (t) => (t === "-e" ? "hit" : t === "-l" ? "takes-value" : "plain"));

const php: Detector = (args) =>
  scanOptions(args, (t) =>
    ["-r", "-R", "-B", "-E"].includes(t) ? "hit" : /^-[cdzFf]$/.test(t) ? "takes-value" : "plain",
  );

const SHELL_VALUE_OPTIONS = new Set(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"]);

/** Any short-flag cluster containing `c`; `-o`/`-O` take a value. */
const shell: Detector = (args) =>
  scanOptions(args, (t) =>
    /^-[A-Za-z]+$/.test(t) && t.includes("c")
      ? "hit"
      : SHELL_VALUE_OPTIONS.has(t)
        ? "takes-value"
        : "plain",
  );

const fish: Detector = (args) =>
  scanOptions(args, (t) => {
    if (/^-[A-Za-z]+$/.test(t) && /[cC]/.test(t)) return "hit";
    if (/^--(command|init-command)(=|$)/.test(t)) return "hit";
    return ["-d", "--debug", "-o", "--debug-output", "-f", "--features"].includes(t)
      ? "takes-value"
      : "plain";
  });

/** PowerShell: `-c`, `-command`, `-encodedcommand` (and `-ec`, `-cwa`), any prefix, any case. */
const powershell: Detector = (args) => {
  for (const token of args) {
    const name = /^(?:--?|\/)([A-Za-z]+)(?::.*)?$/.exec(token)?.[1]?.toLowerCase();
    if (name === undefined) continue;
    const isPrefix = (full: string): boolean => full.startsWith(name);
    if (isPrefix("command") || isPrefix("encodedcommand") || isPrefix("commandwithargs"))
      return token;
    if (name === "ec" || name === "cwa") return token;
    // Everything after -File belongs to the script.
    if (name === "f" || (name.length > 1 && "file".startsWith(name))) return null;
  }
  return null;
};

const cmd: Detector = (args) => args.find((t) => /^\/[ck]/i.test(t)) ?? null;

const SHELLS = new Set(["sh", "bash", "zsh", "dash", "ksh", "ash"]);

function detectorFor(name: string): Detector | null {
  if (name === "node" || name === "nodejs") return node;
  if (name === "bun") return bun;
  if (name === "deno") return deno;
  if (name.startsWith("python") || name.startsWith("pypy")) return python;
  if (name === "ruby") return ruby;
  if (name === "perl") return perl;
  if (name === "lua") return lua;
  if (name === "php") return php;
  if (SHELLS.has(name)) return shell;
  if (name === "fish") return fish;
  if (name === "pwsh" || name === "powershell") return powershell;
  if (name === "cmd") return cmd;
  return null;
}

const ENV_VALUE_OPTIONS = new Set(["-u", "--unset", "-C", "--chdir"]);
const ENV_SPLIT_OPTIONS = new Set(["-S", "--split-string"]);

/** Strips `env [options] [VAR=value ...]`; returns the wrapped argv (possibly empty). */
function unwrapEnv(args: readonly string[]): string[] {
  const rest = [...args];
  while (rest.length > 0) {
    const token = rest[0] ?? "";
    if (ENV_SPLIT_OPTIONS.has(token) || /^-S./.test(token) || token.startsWith("--split-string=")) {
      const joined = ENV_SPLIT_OPTIONS.has(token)
        ? (rest[1] ?? "")
        : token.startsWith("-S")
          ? token.slice(2)
          : token.slice("--split-string=".length);
      rest.splice(
        0,
        ENV_SPLIT_OPTIONS.has(token) ? 2 : 1,
        ...joined.split(/\s+/).filter((t) => t !== ""),
      );
      continue;
    }
    if (ENV_VALUE_OPTIONS.has(token)) {
      rest.splice(0, 2);
      continue;
    }
    if (token === "--") {
      rest.shift();
      break;
    }
    if (token.startsWith("-") || (token.includes("=") && !token.startsWith("="))) {
      rest.shift();
      continue;
    }
    break;
  }
  return rest;
}

/**
 * Returns the interpreter and flag when `command args…` would evaluate inline code under
 * the inline-code policy, else null.
 */
export function detectInlineCode(
  command: string,
  args: readonly string[],
): InlineCodeFinding | null {
  let argv = [command, ...args];
  // Bounded: each round consumes at least the `env` token.
  for (let depth = 0; depth < 16 && argv.length > 0; depth++) {
    const interpreter = interpreterName(argv[0] ?? "");
    const rest = argv.slice(1);
    if (interpreter === "env") {
      argv = unwrapEnv(rest);
      continue;
    }
    const detector = detectorFor(interpreter);
    if (detector === null) return null;
    const flag = detector(rest);
    return flag === null ? null : { interpreter, flag };
  }
  return null;
}

/**
 * Throws POLICY_DENIED naming the interpreter and flag when `command args…` evaluates inline
 * code; for admission under `strict_cli_tool_inline_code`, before anything runs.
 */
export function assertNoInlineCode(command: string, args: readonly string[]): void {
  const finding = detectInlineCode(command, args);
  if (finding === null) return;
  throw new RuntimeError(
    "POLICY_DENIED",
    `strict_cli_tool_inline_code: ${finding.interpreter} ${finding.flag} evaluates inline code; move it into a script file`,
    { policy: "strict_cli_tool_inline_code", interpreter: finding.interpreter, flag: finding.flag },
  );
}

/** The executable's base name, lower-cased, without a Windows `.exe`/`.cmd`/`.bat` suffix. */
function exactName(command: string): string {
  const trimmed = command.replace(/[/\\]+$/, "");
  const base = (trimmed.split(/[/\\]/).pop() ?? "").toLowerCase();
  return base.replace(/\.(exe|cmd|bat)$/, "");
}

function exactArg(args: readonly string[], flags: readonly string[]): string | null {
  return args.find((arg) => flags.some((flag) => arg.toLowerCase() === flag)) ?? null;
}

function exactTrigger(name: string, args: readonly string[]): string | null {
  if (name === "node" || name === "nodejs" || name === "bun")
    return exactArg(args, ["-e", "--eval", "-p", "--print"]);
  if (name === "deno") return args[0]?.toLowerCase() === "eval" ? (args[0] ?? null) : null;
  if (name === "python" || name === "pypy" || /^python\d+(\.\d+)?$/.test(name))
    return exactArg(args, ["-c"]);
  if (name === "ruby" || name === "perl" || name === "lua") return exactArg(args, ["-e"]);
  if (name === "php") return exactArg(args, ["-r"]);
  if (["sh", "bash", "zsh", "dash", "ksh", "ash", "fish"].includes(name))
    return args.find((arg) => /^-[A-Za-z]+$/.test(arg) && arg.includes("c")) ?? null;
  if (name === "pwsh" || name === "powershell")
    return exactArg(args, ["-c", "-command", "-encodedcommand"]);
  if (name === "cmd") return exactArg(args, ["/c", "/k"])?.toLowerCase() ?? null;
  return null;
}

/**
 * Upstream kernel's inline-code rule, which `runx kernel eval` reproduces: an interpreter
 * flag counts wherever it appears as a whole (trimmed, case-insensitive) argument, and `env`
 * is looked through only past `NAME=value` assignments. The runtime's own admission uses the
 * option-aware {@link detectInlineCode}, which also catches clustered and prefixed flags.
 */
export function detectKernelInlineCode(
  command: string | undefined,
  args: readonly string[],
): InlineCodeFinding | null {
  let name = exactName(command ?? "");
  let argv = args.map((arg) => arg.trim());
  for (let depth = 0; depth < 16 && name !== ""; depth++) {
    if (name !== "env") {
      const flag = exactTrigger(name, argv);
      return flag === null ? null : { interpreter: name, flag };
    }
    const rest = argv.filter((arg) => arg !== "");
    let i = 0;
    while (i < rest.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[i] ?? "")) i += 1;
    if (i >= rest.length) return null;
    name = exactName(rest[i] ?? "");
    argv = rest.slice(i + 1);
  }
  return null;
}
