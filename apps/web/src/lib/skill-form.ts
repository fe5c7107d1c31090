/**
 * The start-run form model: one field per declared input of the chosen runner. The catalog
 * gives input names (and, when it carries them, type/required/description descriptors);
 * values are sent as strings unless the field is typed or the operator asks for JSON.
 */
export interface FormField {
  name: string;
  type: string | null;
  required: boolean;
  description: string | null;
}

export interface RunnerInfo {
  name: string;
  type: string;
  default: boolean;
  inputs: unknown;
  /** Whether a run may hand work to an adapter (the catalog's answer; absent: by type). */
  dispatches?: boolean;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Fields from a runner's inputs: `["a", "b"]`, `[{name, type, …}]` or `{a: {type, …}}`. */
export function fieldsOf(inputs: unknown): FormField[] {
  const one = (name: string, d: unknown): FormField => ({
    name,
    type: isRecord(d) && typeof d.type === "string" ? d.type : null,
    required: isRecord(d) && d.required === true,
    description: isRecord(d) && typeof d.description === "string" ? d.description : null,
  });
  if (Array.isArray(inputs)) {
    return inputs.flatMap((item): FormField[] => {
      if (typeof item === "string") return [one(item, null)];
      if (isRecord(item) && typeof item.name === "string") return [one(item.name, item)];
      return [];
    });
  }
  if (isRecord(inputs)) return Object.entries(inputs).map(([name, d]) => one(name, d));
  return [];
}

/** The runner a form starts with: the default, else the first. */
export function defaultRunner<R extends { default: boolean }>(
  runners: readonly R[],
): R | undefined {
  return runners.find((r) => r.default) ?? runners[0];
}

export type InputsResult =
  { ok: true; inputs: Record<string, unknown> } | { ok: false; field: string; error: string };

/**
 * Form values → run inputs. Empty values are left out (the runtime reports missing required
 * inputs by name). Typed number/integer/boolean/object/array fields, and every field when
 * `asJson`, are parsed as JSON.
 */
export function buildInputs(
  fields: readonly FormField[],
  values: Readonly<Record<string, string>>,
  asJson: boolean,
): InputsResult {
  const inputs: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = values[field.name] ?? "";
    if (raw.trim() === "") continue;
    const typed = field.type !== null && field.type !== "string";
    if (asJson || typed) {
      try {
        inputs[field.name] = JSON.parse(raw) as unknown;
      } catch {
        if (!asJson && field.type !== null && field.type !== "string") {
          return {
            ok: false,
            field: field.name,
            error: `${field.name} is not a valid ${field.type}`,
          };
        }
        return { ok: false, field: field.name, error: `${field.name} is not valid JSON` };
      }
    } else {
      inputs[field.name] = raw;
    }
  }
  return { ok: true, inputs };
}

/**
 * Flags `runx skill` reads itself (packages/runtime/src/cli/commands/skill.ts and the input
 * flags' own spellings): an input of one of these names goes as `--input name=value`.
 */
const CLI_FLAGS = new Set([
  "json",
  "j",
  "receipt-dir",
  "secret-env",
  "package-digest",
  "execution-closure-digest",
  "non-interactive",
  "allow-spawn",
  "registry-dir",
  "registry",
  "digest",
  "input",
  "input-json",
  "inputs",
  "runner",
  "run-id",
  "answers",
  "receipt",
  "help",
  "h",
]);

/** A word for a POSIX shell: as it is when it needs no quoting, else single-quoted. */
export function shellWord(text: string): string {
  if (/^[A-Za-z0-9@%+=:,./_-]+$/.test(text)) return text;
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** True when the CLI would read `text` as something other than this exact string. */
function readsAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `runx skill` command line, run from the workspace root, that starts what the form
 * would: the catalog's `cliRef` (a workspace path or a pinned `registry:` ref), the runner
 * when it is not the default, each filled input as the CLI reads it (text that would parse as
 * JSON, and typed or JSON values, go as `--input-json name=<json>` so they keep their type),
 * `<name>` for a required input still empty, and `--allow-spawn` when granted.
 */
export function cliCommand(options: {
  cliRef: string;
  runner?: { name: string; default: boolean } | undefined;
  fields: readonly FormField[];
  values: Readonly<Record<string, string>>;
  asJson?: boolean;
  allowSpawn?: boolean;
}): string {
  const words = ["runx", "skill", shellWord(options.cliRef)];
  if (options.runner !== undefined && !options.runner.default) {
    words.push(shellWord(options.runner.name));
  }
  const built = buildInputs(options.fields, options.values, options.asJson === true);
  const inputs = built.ok ? built.inputs : {};
  for (const field of options.fields) {
    const value = inputs[field.name];
    if (value === undefined) {
      if (field.required) words.push(`--${field.name}`, `<${field.name}>`);
      continue;
    }
    const direct = /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(field.name) && !CLI_FLAGS.has(field.name);
    if (typeof value === "string" && !readsAsJson(value) && !value.startsWith("-") && direct) {
      words.push(`--${field.name}`, shellWord(value));
    } else if (typeof value === "string" && !readsAsJson(value)) {
      words.push("--input", shellWord(`${field.name}=${value}`));
    } else {
      words.push("--input-json", shellWord(`${field.name}=${JSON.stringify(value)}`));
    }
  }
  if (options.allowSpawn === true) words.push("--allow-spawn");
  return words.join(" ");
}
