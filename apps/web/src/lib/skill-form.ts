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
            error: `${field.name}: not a valid ${field.type}`,
          };
        }
        return { ok: false, field: field.name, error: `${field.name}: not valid JSON` };
      }
    } else {
      inputs[field.name] = raw;
    }
  }
  return { ok: true, inputs };
}
