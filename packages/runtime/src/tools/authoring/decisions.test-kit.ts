/**
 * Test helpers for the authoring tools (not for production code): a public build decision for
 * a small digest-note package, its change draft, and the package bytes the draft writes.
 */
export const BASE = `sha256:${"a".repeat(64)}`;

/** A minimal public package: a manual and a one-step graph with one harness case. */
export function notePackage(name = "digest-note"): Array<{ path: string; contents: string }> {
  return [
    {
      path: "SKILL.md",
      contents: `---\nname: ${name}\ndescription: Digest one supplied note.\n---\n\n# ${name}\n\nDigest the note exactly as supplied.\n`,
    },
    {
      path: "X.yaml",
      contents: [
        `skill: ${name}`,
        "catalog:",
        "  execution: read",
        "harness:",
        "  cases:",
        "    - name: digests-the-note",
        "      inputs: { note: hello }",
        "      expect: { status: sealed }",
        "runners:",
        "  default:",
        "    default: true",
        "    type: graph",
        "    inputs:",
        "      note: { type: string, required: true }",
        "    graph:",
        "      name: digest-note",
        "      steps:",
        "        - id: digest",
        "          tool: data.digest",
        "          inputs:",
        "            value: $input.note",
        "",
      ].join("\n"),
    },
  ];
}

/** A public build decision that passes every admission rule. */
export function decision(): Record<string, unknown> {
  return {
    schema: "runx.skill.architecture_decision.v1",
    disposition: "build",
    identity: {
      proposed_name: "digest-note",
      action: "create",
      visibility: "public",
      rationale: "Digest-note is the operation's own name.",
    },
    direct_use: {
      trigger_requests: ["Digest this note."],
      non_trigger_requests: ["Publish this note."],
      default_outcome: "One digest of the supplied note.",
      routine_host_work: ["Read the supplied note."],
      runx_boundary: "Bind the note and its digest in a receipt.",
      terminal_result: "A digest packet.",
      blocker_behavior: "Stop once and name the missing note.",
      native_escape: "Return the note for the host to digest directly.",
    },
    chain_use: {
      accepted_inputs: ["A note or a prior note packet."],
      result: "A reusable digest packet.",
      reused_evidence: ["The supplied note."],
      reused_effects: [],
      must_not_repeat: ["Do not re-read a note already supplied."],
    },
    objective: "Create a bounded digest-note skill.",
    operator_value: "One stable digest for a supplied note.",
    knowledge_contract: {
      purpose: "Digest one note.",
      evidence_required: ["One note."],
      decision_logic: ["Hash the exact note."],
      stop_conditions: ["Stop when the note is absent."],
      recovery: ["Resume with a note."],
    },
    required_behaviors: [
      { id: "guide", outcome: "Teach the operator.", lane: "manual" },
      {
        id: "digest",
        outcome: "Digest the note.",
        lane: "native_capability",
        reuse_ref: "data.digest",
      },
    ],
    native_reuse: {
      inspected_capabilities: ["runx.skill.inspect", "data.digest"],
      selected_capabilities: ["data.digest"],
      missing_capabilities: [],
    },
    effects: [{ effect: "read", authority_scopes: [], approval: "none", provider_boundary: false }],
    skill_chain: { context_skills: [], routes: [] },
    resource_budget: {
      max_files: 2,
      max_executable_lines: 0,
      max_fanout: 1,
      max_process_spawns: 0,
      network_allowed: false,
    },
    preservation_obligations: [],
    deletions: [],
    proof_plan: [
      { name: "selection", kind: "selection_trial", expected: "A digest request selects it." },
      { name: "standalone", kind: "standalone_operator_journey", expected: "A note digests." },
      { name: "composed", kind: "composed_operator_journey", expected: "A prior note is reused." },
    ],
  };
}

/** A decision that builds nothing (no identity or operator contract). */
export function noSkillDecision(): Record<string, unknown> {
  const d = decision();
  delete d.identity;
  delete d.direct_use;
  delete d.chain_use;
  d.disposition = "no_skill";
  d.required_behaviors = [];
  d.proof_plan = [];
  (d.native_reuse as Record<string, unknown>).selected_capabilities = [];
  return d;
}

/** The write draft for {@link decision}. */
export function draft(): Record<string, unknown> {
  return {
    schema: "runx.skill.change_draft.v1",
    decision: "write",
    summary: "Create the manual and the digest graph.",
    non_goals: ["No package code."],
    writes: notePackage(),
    deletes: [],
    expected_outputs: [
      { name: "digest_result", value_type: "object", packet: "runx.data.digest.v1" },
    ],
  };
}
