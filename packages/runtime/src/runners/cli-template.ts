/**
 * Template expansion for cli-tool `args` (argv "after `$input`/template
 * substitution; no shell interpolation"). Each arg stays exactly one argv entry; nothing is
 * split, globbed or re-parsed.
 *
 * - an arg that is exactly `$input.<path>` becomes the input's value;
 * - `{{input.<path>}}` / `{{inputs.<path>}}` inside an arg become the value, in place;
 * - `{{env.RUNX_CWD}}` becomes the workspace root; no other `env.` name is readable;
 * - any other `{{…}}` text (e.g. a Go template `{{.Name}}`) is left as written.
 *
 * Values: strings raw, everything else JSON. A referenced input that is absent fails with
 * INPUT_INVALID rather than silently shifting argv positions.
 */
import { RuntimeError } from "../errors.js";
import { inputValueText, lookupInputPath } from "../process/environment.js";

const WHOLE_INPUT_REF = /^\$input\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)$/;
const PLACEHOLDER = /\{\{\s*(input|inputs|env)\.([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)\s*\}\}/g;

/** What templates may read. */
export interface TemplateScope {
  inputs: Readonly<Record<string, unknown>>;
  workspaceRoot: string;
}

function inputText(scope: TemplateScope, path: string, index: number): string {
  const value = lookupInputPath(scope.inputs, path);
  if (value === undefined) {
    throw new RuntimeError(
      "INPUT_INVALID",
      `args[${index}] references input ${path}, which was not supplied`,
      {
        path: `args[${index}]`,
        input: path,
      },
    );
  }
  return inputValueText(value);
}

function expandOne(arg: string, index: number, scope: TemplateScope): string {
  const whole = WHOLE_INPUT_REF.exec(arg);
  if (whole?.[1] !== undefined) return inputText(scope, whole[1], index);
  return arg.replace(PLACEHOLDER, (_match, namespace: string, path: string) => {
    if (namespace !== "env") return inputText(scope, path, index);
    if (path === "RUNX_CWD") return scope.workspaceRoot;
    throw new RuntimeError(
      "PACKAGE_INVALID",
      `args[${index}] reads env.${path}; only env.RUNX_CWD is available`,
      {
        path: `args[${index}]`,
      },
    );
  });
}

/** Expands every arg; the result has the same length as `args`. */
export function expandArgs(args: readonly string[], scope: TemplateScope): string[] {
  return args.map((arg, index) => {
    const expanded = expandOne(arg, index, scope);
    if (expanded.includes("\0")) {
      throw new RuntimeError("INPUT_INVALID", `args[${index}] would contain a NUL byte`, {
        path: `args[${index}]`,
      });
    }
    return expanded;
  });
}
