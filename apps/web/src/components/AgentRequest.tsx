import type { ReactNode } from "react";
import { prettyJson } from "@/lib/format";
import { inlineParts, promptBlocks } from "@/lib/prompt-view";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function valueText(value: unknown): string {
  return typeof value === "string" ? value : prettyJson(value);
}

function Inline({ text }: { text: string }) {
  return (
    <>
      {inlineParts(text).map((part, i) =>
        part.code ? (
          <code key={i}>{part.text}</code>
        ) : part.emphasis === "strong" ? (
          <strong key={i}>{part.text}</strong>
        ) : part.emphasis === "em" ? (
          <em key={i}>{part.text}</em>
        ) : (
          <span key={i}>{part.text}</span>
        ),
      )}
    </>
  );
}

/** The instructions' Markdown as text blocks; their headings sit below the section's h2. */
function Prompt({ text }: { text: string }) {
  return (
    <div className="agent-prompt">
      {promptBlocks(text).map((block, i): ReactNode => {
        if (block.kind === "heading") {
          const Tag = `h${Math.min(block.level + 2, 6)}` as "h3";
          return (
            <Tag key={i} className="agent-prompt-heading">
              <Inline text={block.text} />
            </Tag>
          );
        }
        if (block.kind === "code") return <pre key={i}>{block.text}</pre>;
        if (block.kind === "list") {
          const List = block.ordered ? "ol" : "ul";
          return (
            <List key={i}>
              {block.items.map((item, j) => (
                <li key={j}>
                  <Inline text={item} />
                </li>
              ))}
            </List>
          );
        }
        return (
          <p key={i}>
            <Inline text={block.text} />
          </p>
        );
      })}
    </div>
  );
}

/**
 * What an agent is asked, in readable form: the step's instructions (the SKILL.md body and
 * the step's own instructions), the inputs it gets, and the tools it may call; the raw
 * request envelope stays in a disclosure.
 */
export function AgentRequest({
  label,
  prompt,
  invocation,
}: {
  label: string;
  prompt: string | null;
  invocation: Record<string, unknown>;
}) {
  const envelope = isRecord(invocation.envelope) ? invocation.envelope : {};
  const inputs = isRecord(envelope.inputs) ? Object.entries(envelope.inputs) : [];
  const tools = Array.isArray(envelope.allowed_tools) ? envelope.allowed_tools.map(String) : [];
  return (
    <div className="agent-request" data-testid="agent-request">
      <p>
        Step <strong>{label}</strong> asks
        {typeof invocation.agent === "string" ? (
          <>
            {" "}
            the <strong>{invocation.agent}</strong> agent
          </>
        ) : null}
        :
      </p>
      {prompt !== null ? (
        <Prompt text={prompt} />
      ) : (
        <p className="muted">The package gives no instructions for this request.</p>
      )}
      {inputs.length > 0 && (
        <dl className="agent-inputs">
          {inputs.map(([name, value]) => (
            <div key={name} className="agent-input">
              <dt>{name}</dt>
              <dd className={typeof value === "string" ? undefined : "mono"}>{valueText(value)}</dd>
            </div>
          ))}
        </dl>
      )}
      {tools.length > 0 && <p className="hint">Tools it may call: {tools.join(", ")}.</p>}
      <details className="agent-raw">
        <summary>Raw request</summary>
        <pre className="json">{prettyJson(invocation)}</pre>
      </details>
    </div>
  );
}
