"use client";

import { useId, useState } from "react";
import type { FormEvent } from "react";
import { useRouter } from "next/navigation";
import { ErrorNotice } from "@/components/ErrorNotice";
import type { RouterOutputs } from "@/lib/api-types";
import { browserApi, errorInfo } from "@/lib/client-api";
import type { ApiProblem } from "@/lib/client-api";
import { formatTime } from "@/lib/format";
import { useHydrated } from "@/lib/hydrated";
import {
  PASSWORD_MAX,
  PASSWORD_MIN,
  ROLES,
  generatePassword,
  passwordProblem,
} from "@/lib/operators";
import type { Role } from "@/lib/operators";
import { TableWrap } from "./TableWrap";

type OperatorRow = RouterOutputs["auth"]["listOperators"][number];

/** What the last action did, said once in the page's status region. */
interface Outcome {
  text: string;
  /** A generated initial password, shown with the outcome and nowhere else. */
  password?: { username: string; value: string };
}

const roleLabel = (role: string): string => ROLES.find((r) => r.role === role)?.label ?? role;

/**
 * The admin's operator table and add form. Every action is a button or a form (keyboard
 * first); its outcome or error is announced in one status region above the table, the
 * error's code folded in its details.
 */
export function OperatorsAdmin({ operators, me }: { operators: OperatorRow[]; me: string }) {
  const router = useRouter();
  const hydrated = useHydrated();
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);

  /** Runs one API call; its outcome or error replaces the previous one; the list reloads. */
  async function act<T>(call: () => Promise<T>, done: (value: T) => Outcome): Promise<boolean> {
    setBusy(true);
    setError(null);
    setOutcome(null);
    try {
      const value = await call();
      setOutcome(done(value));
      router.refresh();
      return true;
    } catch (e) {
      setError(errorInfo(e));
      return false;
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="operators">
      <div aria-live="polite" className="operators-outcome">
        {outcome && (
          <div className="ok" role="status" data-testid="operators-outcome">
            <p>{outcome.text}</p>
            {outcome.password && (
              <p>
                Initial password of {outcome.password.username} (shown once; copy it now and give it
                to them privately): <code className="secret">{outcome.password.value}</code>
              </p>
            )}
          </div>
        )}
        <ErrorNotice problem={error} />
      </div>
      <TableWrap label="Table of operators">
        <table className="table operators-table">
          <caption className="visually-hidden">Operators of this console</caption>
          <thead>
            <tr>
              <th scope="col">Username</th>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Created</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">Access</th>
            </tr>
          </thead>
          <tbody>
            {operators.map((op) => (
              <OperatorRowView
                key={`${op.id}:${op.role}:${String(op.disabled)}`}
                op={op}
                self={op.username === me}
                disabled={!hydrated || busy}
                act={act}
              />
            ))}
          </tbody>
        </table>
      </TableWrap>
      <AddOperatorForm disabled={!hydrated || busy} act={act} />
    </div>
  );
}

type Act = <T>(call: () => Promise<T>, done: (value: T) => Outcome) => Promise<boolean>;

function OperatorRowView({
  op,
  self,
  disabled,
  act,
}: {
  op: OperatorRow;
  self: boolean;
  disabled: boolean;
  act: Act;
}) {
  const [role, setRole] = useState<string>(op.role);
  const [confirming, setConfirming] = useState(false);
  const id = useId();
  const api = browserApi().auth;

  function changeRole(event: FormEvent) {
    event.preventDefault();
    void act(
      () => api.setOperatorRole.mutate({ username: op.username, role: role as Role }),
      (changed) => ({
        text: `${changed.username} is now ${roleLabel(changed.role).toLowerCase()}; it applies from their next request.`,
      }),
    );
  }

  function setDisabled(next: boolean) {
    void act(
      () => api.setOperatorDisabled.mutate({ username: op.username, disabled: next }),
      (changed) => ({
        text: changed.disabled
          ? `${changed.username} is disabled; their sessions and API tokens have ended.`
          : `${changed.username} is enabled again; they sign in with their password (old sessions and tokens stay ended).`,
      }),
    ).then(() => setConfirming(false));
  }

  return (
    <tr data-testid={`operator-${op.username}`} className={op.disabled ? "is-disabled" : undefined}>
      <th scope="row">
        {op.username}
        {self && <span className="muted"> (you)</span>}
      </th>
      <td>
        <form
          className="role-form"
          onSubmit={changeRole}
          aria-label={`Change the role of ${op.username}`}
        >
          <label htmlFor={`${id}-role`} className="visually-hidden">
            Role of {op.username}
          </label>
          <select
            id={`${id}-role`}
            value={role}
            onChange={(e) => setRole(e.target.value)}
            disabled={disabled}
          >
            {ROLES.map((r) => (
              <option key={r.role} value={r.role}>
                {r.label}
              </option>
            ))}
          </select>
          <button
            type="submit"
            className="button"
            disabled={disabled || role === op.role}
            aria-label={`Change role of ${op.username}`}
          >
            Change role
          </button>
        </form>
      </td>
      <td>
        <span className={`badge ${op.disabled ? "badge-bad" : "badge-ok"}`}>
          {op.disabled ? "Disabled" : "Enabled"}
        </span>
      </td>
      <td>{formatTime(op.createdAt)}</td>
      <td>{op.lastSignInAt !== null ? formatTime(op.lastSignInAt) : "Not recorded"}</td>
      <td>
        {op.disabled ? (
          <button
            type="button"
            className="button"
            disabled={disabled}
            onClick={() => setDisabled(false)}
            aria-label={`Enable ${op.username}`}
          >
            Enable
          </button>
        ) : confirming ? (
          <span className="confirm" role="group" aria-label={`Confirm disabling ${op.username}`}>
            <span>Their sessions and API tokens end.</span>{" "}
            <button
              type="button"
              className="button deny"
              disabled={disabled}
              onClick={() => setDisabled(true)}
              // The confirmation takes the focus the Disable button had.
              autoFocus
            >
              Disable {op.username}
            </button>{" "}
            <button
              type="button"
              className="button ghost"
              onClick={() => setConfirming(false)}
              disabled={disabled}
            >
              Cancel
            </button>
          </span>
        ) : (
          <button
            type="button"
            className="button"
            disabled={disabled}
            onClick={() => setConfirming(true)}
            aria-label={`Disable ${op.username}`}
          >
            Disable
          </button>
        )}
      </td>
    </tr>
  );
}

function AddOperatorForm({ disabled, act }: { disabled: boolean; act: Act }) {
  const [username, setUsername] = useState("");
  const [role, setRole] = useState<Role>("approver");
  const [password, setPassword] = useState("");
  const [generated, setGenerated] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const bad = passwordProblem(password);
    if (bad !== null) {
      setProblem(bad);
      return;
    }
    setProblem(null);
    const shown = generated ? password : null;
    const added = await act(
      () => browserApi().auth.addOperator.mutate({ username, role, password }),
      (op) => ({
        text: `Added ${op.username} as ${roleLabel(op.role).toLowerCase()}. They can sign in now.`,
        ...(shown !== null ? { password: { username: op.username, value: shown } } : {}),
      }),
    );
    if (added) {
      setUsername("");
      setPassword("");
      setGenerated(false);
    }
  }

  return (
    <form
      className="card add-operator"
      aria-labelledby="add-operator"
      onSubmit={(e) => void submit(e)}
    >
      <h2 id="add-operator">Add an operator</h2>
      <fieldset className="bare" disabled={disabled}>
        <div className="field">
          <label htmlFor="new-username">Username</label>
          <input
            id="new-username"
            name="username"
            autoComplete="off"
            required
            maxLength={64}
            value={username}
            onChange={(e) => setUsername(e.target.value)}
            aria-describedby="new-username-hint"
          />
          <p className="hint" id="new-username-hint">
            Letters, digits, &apos;.&apos;, &apos;_&apos; and &apos;-&apos;, starting with a letter
            or digit.
          </p>
        </div>
        <fieldset className="roles">
          <legend>Role</legend>
          {ROLES.map((r) => (
            <div className="role-choice" key={r.role}>
              <input
                type="radio"
                id={`new-role-${r.role}`}
                name="role"
                value={r.role}
                checked={role === r.role}
                onChange={() => setRole(r.role)}
                aria-describedby={`new-role-${r.role}-d`}
              />
              <label htmlFor={`new-role-${r.role}`}>{r.label}</label>
              <p className="hint" id={`new-role-${r.role}-d`}>
                {r.allows}
              </p>
            </div>
          ))}
        </fieldset>
        <div className="field">
          <label htmlFor="new-password">Initial password</label>
          <div className="password-row">
            <input
              id="new-password"
              name="password"
              // A generated password is shown so it can be copied; a typed one is not.
              type={generated ? "text" : "password"}
              autoComplete="new-password"
              required
              minLength={PASSWORD_MIN}
              maxLength={PASSWORD_MAX}
              value={password}
              onChange={(e) => {
                setPassword(e.target.value);
                setGenerated(false);
              }}
              aria-describedby="new-password-hint"
              aria-invalid={problem !== null ? true : undefined}
              className={generated ? "mono" : undefined}
            />
            <button
              type="button"
              className="button"
              onClick={() => {
                setPassword(generatePassword());
                setGenerated(true);
                setProblem(null);
              }}
            >
              Generate a password
            </button>
          </div>
          <p className="hint" id="new-password-hint">
            At least {PASSWORD_MIN} characters, the same rule as the first admin&apos;s. A generated
            one is shown once, when the operator is added; give it to them privately.
          </p>
          {problem !== null && (
            <p role="alert" className="error">
              {problem}
            </p>
          )}
        </div>
        <div>
          <button type="submit" className="button primary">
            Add operator
          </button>
        </div>
      </fieldset>
    </form>
  );
}
