import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import {
  INPUTS_JSON_ENV_MAX_BYTES,
  INPUT_ENV_MAX_BYTES,
  buildChildEnvironment,
  inputEnvName,
  selectDeclaredEnvironment,
  writeInputFiles,
  type ChildEnvironmentOptions,
} from "./environment.js";

const BASE = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/op",
  LANG: "C.UTF-8",
  SECRET_X: "hunter2",
  HTTP_PROXY: "http://proxy.invalid",
  AWS_SECRET_ACCESS_KEY: "aws",
  RUNX_RECEIPT_SIGN_ED25519_PRIVATE_KEY: "signing-key",
  RUNX_AGENT_API_KEY: "agent-key",
  SERVICE_URL: "https://svc.invalid",
  UNSET_ME: undefined,
};

function build(overrides: Partial<ChildEnvironmentOptions> = {}): Record<string, string> {
  return buildChildEnvironment({ baseEnv: BASE, inputs: {}, workspaceRoot: "/ws", ...overrides });
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isRuntimeError(error) ? error.code : "NOT_A_RUNTIME_ERROR";
  }
  return undefined;
}

const scratch: string[] = [];
afterEach(() => {
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("buildChildEnvironment", () => {
  it("passes only the baseline allowlist from the base environment", () => {
    const env = build();
    expect(env).toEqual({
      PATH: "/usr/bin:/bin",
      HOME: "/home/op",
      LANG: "C.UTF-8",
      RUNX_CWD: "/ws",
      RUNX_INPUTS_JSON: "{}",
    });
    expect(env).not.toHaveProperty("SECRET_X");
    expect(env).not.toHaveProperty("HTTP_PROXY");
  });

  it("passes declared optional names when set and skips them when unset", () => {
    const env = build({ declared: { optional: ["SERVICE_URL", "UNSET_ME", "NOT_THERE"] } });
    expect(env.SERVICE_URL).toBe("https://svc.invalid");
    expect(env).not.toHaveProperty("UNSET_ME");
    expect(env).not.toHaveProperty("NOT_THERE");
  });

  it("fails with ENV_MISSING naming a required variable that is not set", () => {
    let caught: unknown;
    try {
      build({ declared: { required: ["SERVICE_TOKEN_URL"] } });
    } catch (error) {
      caught = error;
    }
    expect(isRuntimeError(caught) && caught.code).toBe("ENV_MISSING");
    expect(isRuntimeError(caught) && caught.details.variable).toBe("SERVICE_TOKEN_URL");
  });

  it("never passes RUNX_RECEIPT_SIGN_* or other runx secrets, even when declared", () => {
    expect(
      codeOf(() => build({ declared: { optional: ["RUNX_RECEIPT_SIGN_ED25519_PRIVATE_KEY"] } })),
    ).toBe("POLICY_DENIED");
    expect(codeOf(() => build({ declared: { required: ["RUNX_AGENT_API_KEY"] } }))).toBe(
      "POLICY_DENIED",
    );
    expect(codeOf(() => build({ literalEnv: { RUNX_RECEIPT_SIGN_KID: "x" } }))).toBe(
      "POLICY_DENIED",
    );
    expect(codeOf(() => build({ credentialEnv: { RUNX_PUBLIC_API_TOKEN: "x" } }))).toBe(
      "POLICY_DENIED",
    );
    const env = build({ declared: { optional: ["SERVICE_URL"] } });
    expect(Object.keys(env).some((name) => name.startsWith("RUNX_RECEIPT_SIGN_"))).toBe(false);
  });

  it("rejects declared names that are not environment variable names", () => {
    expect(codeOf(() => build({ declared: { optional: ["BAD-NAME"] } }))).toBe("PACKAGE_INVALID");
  });

  it("names RUNX_INPUT_<NAME> upper-cased with non-alphanumerics as underscores", () => {
    expect(inputEnvName("message")).toBe("MESSAGE");
    expect(inputEnvName("dry-run")).toBe("DRY_RUN");
    expect(inputEnvName("a.b c")).toBe("A_B_C");
    const env = build({
      inputs: { message: "hi", "dry-run": true, count: 5, spec: { a: [1] }, nothing: null },
    });
    expect(env.RUNX_INPUT_MESSAGE).toBe("hi");
    expect(env.RUNX_INPUT_DRY_RUN).toBe("true");
    expect(env.RUNX_INPUT_COUNT).toBe("5");
    expect(env.RUNX_INPUT_SPEC).toBe('{"a":[1]}');
    expect(env.RUNX_INPUT_NOTHING).toBe("null");
  });

  it("sets RUNX_INPUT_<NAME> only for values of at most 8 KiB", () => {
    const env = build({
      inputs: { fits: "x".repeat(INPUT_ENV_MAX_BYTES), over: "x".repeat(INPUT_ENV_MAX_BYTES + 1) },
    });
    expect(env.RUNX_INPUT_FITS).toHaveLength(INPUT_ENV_MAX_BYTES);
    expect(env).not.toHaveProperty("RUNX_INPUT_OVER");
  });

  it("measures the 8 KiB limit in UTF-8 bytes", () => {
    const env = build({ inputs: { wide: "é".repeat(INPUT_ENV_MAX_BYTES / 2 + 1) } });
    expect(env).not.toHaveProperty("RUNX_INPUT_WIDE");
  });

  it("sets RUNX_INPUTS_JSON only for documents of at most 48 KiB", () => {
    const small = build({ inputs: { a: "b" } });
    expect(JSON.parse(small.RUNX_INPUTS_JSON!)).toEqual({ a: "b" });
    const large = build({ inputs: { a: "x".repeat(INPUTS_JSON_ENV_MAX_BYTES) } });
    expect(large).not.toHaveProperty("RUNX_INPUTS_JSON");
  });

  it("refuses two inputs that map to the same RUNX_INPUT_<NAME>", () => {
    expect(codeOf(() => build({ inputs: { "dry-run": 1, dry_run: 2 } }))).toBe("INPUT_INVALID");
  });

  it("omits a string containing NUL from RUNX_INPUT_<NAME> but keeps it in RUNX_INPUTS_JSON", () => {
    const env = build({ inputs: { raw: "a\0b" } });
    expect(env).not.toHaveProperty("RUNX_INPUT_RAW");
    expect(JSON.parse(env.RUNX_INPUTS_JSON!)).toEqual({ raw: "a\0b" });
  });

  it("resolves literal env values and exact $input references", () => {
    const env = build({
      inputs: { target: { region: "eu" } },
      literalEnv: {
        MODE: "fast",
        REGION: "$input.target.region",
        MISSING: "$input.nope",
        LOOKS: "x $input.target",
      },
    });
    expect(env.MODE).toBe("fast");
    expect(env.REGION).toBe("eu");
    expect(env).not.toHaveProperty("MISSING");
    expect(env.LOOKS).toBe("x $input.target");
  });

  it("lets the runx-provided variables win over declared and literal ones", () => {
    const env = build({
      baseEnv: { ...BASE, RUNX_CWD: "/elsewhere" },
      declared: { optional: ["RUNX_CWD"] },
    });
    expect(env.RUNX_CWD).toBe("/ws");
  });

  it("refuses a credential variable that collides with the runner env", () => {
    expect(
      codeOf(() =>
        build({ literalEnv: { GITHUB_TOKEN: "x" }, credentialEnv: { GITHUB_TOKEN: "y" } }),
      ),
    ).toBe("PACKAGE_INVALID");
    expect(build({ credentialEnv: { GITHUB_TOKEN: "y" } }).GITHUB_TOKEN).toBe("y");
  });

  it("points RUNX_INPUTS_PATH and RUNX_INPUT_<NAME>_PATH at written input files", () => {
    const dir = mkdtempSync(join(tmpdir(), "runx-env-"));
    scratch.push(dir);
    const inputs = { message: "hello", big: { n: 1 } };
    const files = writeInputFiles(join(dir, "inputs"), inputs);
    const env = build({ inputs, inputFiles: files });
    expect(JSON.parse(readFileSync(env.RUNX_INPUTS_PATH!, "utf8"))).toEqual(inputs);
    expect(readFileSync(env.RUNX_INPUT_MESSAGE_PATH!, "utf8")).toBe("hello");
    expect(readFileSync(env.RUNX_INPUT_BIG_PATH!, "utf8")).toBe('{"n":1}');
  });
});

describe("selectDeclaredEnvironment", () => {
  it("returns only the declared names that are set", () => {
    expect(
      selectDeclaredEnvironment(BASE, {
        required: ["HOME"],
        optional: ["SERVICE_URL", "UNSET_ME"],
      }),
    ).toEqual({
      HOME: "/home/op",
      SERVICE_URL: "https://svc.invalid",
    });
  });
});
