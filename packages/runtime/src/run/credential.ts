/**
 * Credential admission for the selected runner: resolve its declared requirement once, put
 * the material into the run's secrets under the declared delivery name only, and taint it.
 * A requirement nothing satisfies ends the command with `needs_credential` before any
 * process starts.
 */
import { RuntimeError } from "../errors.js";
import { requirementOf, resolveCredential, setupCommands } from "../credentials/resolve.js";
import type { RunScope } from "./context.js";
import { makeEnvelope } from "../contracts/envelope.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";

/**
 * Admits the runner's credential into `scope`. Returns a `needs_credential` envelope when
 * nothing matches, undefined when the run may go on.
 */
export async function admitCredential(
  scope: RunScope,
  explicitProfile: string | undefined,
): Promise<SkillRunEnvelope | undefined> {
  const { deps, prep } = scope;
  const name = prep.runner.credential;
  if (name === undefined) {
    if (explicitProfile !== undefined) {
      throw new RuntimeError(
        "USAGE",
        `--profile is only valid when the selected runner declares a credential (runner ${prep.runner.name} declares none)`,
      );
    }
    return undefined;
  }
  const requirement = requirementOf(prep.pkg.profile?.credentials ?? {}, name);
  const resolved = await resolveCredential({
    requirement,
    skillName: prep.pkg.name,
    explicitProfile,
    runxHome: deps.runxHome,
    workspaceRoot: deps.paths.root,
    env: deps.workspaceEnv ?? deps.env,
  });
  if (resolved === undefined) {
    const setup = setupCommands(requirement, prep.pkg.name);
    const env = Object.values(requirement.deliveries);
    const envelope = makeEnvelope({
      status: "needs_credential",
      skillName: prep.pkg.name,
      runner: prep.runner.name,
      runId: prep.runId,
      receiptId: null,
      closure: null,
      result: null,
    });
    envelope.next = setup[0] ?? null;
    envelope.credential_requirement = {
      credential: requirement.name,
      provider: requirement.provider,
      auth_modes: Object.keys(requirement.deliveries),
      env,
      setup,
    };
    return envelope;
  }
  scope.taint.add(resolved.value);
  scope.secrets = { ...scope.secrets, [resolved.ref.envName]: resolved.value };
  scope.credential = resolved.ref;
  return undefined;
}
