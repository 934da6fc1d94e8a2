import { parseMarkdown } from "@tandem/core/rich-text";
import { type ReactNode, useLayoutEffect, useMemo, useRef } from "react";
import type { ChatEnding, ChatMessageItem } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { RichText } from "../rich-text/rich-text";
import type { Transcript } from "./chat-session";
import type { LiveTurn, ToolChip } from "./chat-turns";
import { type ToolState, toolLabel } from "./tool-names";

/** How close to the bottom counts as "following the reply" (the view then scrolls with it). */
const FOLLOW_PX = 80;

export function ChatTranscript({
  transcript,
  onOpenLink,
  onRetry,
}: {
  transcript: Transcript;
  onOpenLink: (href: string) => void;
  onRetry: () => void;
}) {
  const scroller = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  // Scrolls with the reply as it grows, unless the owner scrolled up to read.
  useLayoutEffect(() => {
    const element = scroller.current;
    if (element && following.current) element.scrollTop = element.scrollHeight;
  }, [transcript.entries]);

  return (
    <div
      ref={scroller}
      className="chat-transcript"
      role="log"
      aria-label="Messages"
      onScroll={(event) => {
        const element = event.currentTarget;
        following.current = element.scrollHeight - element.scrollTop - element.clientHeight < FOLLOW_PX;
      }}
    >
      {transcript.status === "loading" && <p className="empty-state">Loading the conversation…</p>}
      {transcript.status === "failed" && (
        <ErrorNotice message={transcript.error ?? "The conversation could not be loaded."} onRetry={onRetry} />
      )}
      {transcript.status === "ready" && transcript.entries.length === 0 && (
        <p className="empty-state chat-empty">Ask your agent about your notes and todos, or ask it to note something down.</p>
      )}
      {transcript.entries.map((entry) =>
        entry.kind === "saved" ? (
          <SavedMessage key={`saved:${entry.message.id}`} message={entry.message} onOpenLink={onOpenLink} />
        ) : (
          <LiveExchange key={entry.turn.key} turn={entry.turn} onOpenLink={onOpenLink} />
        ),
      )}
    </div>
  );
}

function SavedMessage({ message, onOpenLink }: { message: ChatMessageItem; onOpenLink: (href: string) => void }) {
  if (message.role === "user") return <UserMessage text={message.content} />;
  const tools = message.toolsUsed.map((name, index): ToolChip => ({ id: String(index), name, state: "done" }));
  return (
    <AgentMessage text={message.content} tools={tools} onOpenLink={onOpenLink}>
      {message.status === "incomplete" && <p className="chat-ending">Stopped: this answer is incomplete.</p>}
    </AgentMessage>
  );
}

function LiveExchange({ turn, onOpenLink }: { turn: LiveTurn; onOpenLink: (href: string) => void }) {
  return (
    <>
      <UserMessage text={turn.userText} />
      <AgentMessage text={turn.answer} tools={turn.tools} onOpenLink={onOpenLink} live={turn.phase !== "ended"}>
        {turn.phase === "sending" && <p className="chat-working">Sending…</p>}
        {turn.phase === "streaming" && turn.answer === "" && !turn.tools.some((tool) => tool.state === "running") && (
          <p className="chat-working">Thinking…</p>
        )}
        {turn.workingMs !== null && <p className="chat-working">Still working ({Math.round(turn.workingMs / 1000)} s)…</p>}
        {turn.ending && <Ending ending={turn.ending} />}
      </AgentMessage>
    </>
  );
}

function Ending({ ending }: { ending: ChatEnding }) {
  if (ending.status === "stopped") return <p className="chat-ending">Stopped.</p>;
  if (ending.status === "incomplete") {
    return <p className="chat-ending">Incomplete{ending.error ? `: ${ending.error}` : ": the answer was cut short."}</p>;
  }
  if (ending.status === "failed") return <ErrorNotice message={ending.error ?? "The agent could not answer."} />;
  return ending.error ? <p className="chat-ending">{ending.error}</p> : null;
}

function UserMessage({ text }: { text: string }) {
  return (
    <div className="chat-message from-owner">
      <p className="chat-owner-text" dir="auto">
        {text}
      </p>
    </div>
  );
}

function AgentMessage({
  text,
  tools,
  live = false,
  onOpenLink,
  children,
}: {
  text: string;
  tools: readonly ToolChip[];
  live?: boolean;
  onOpenLink: (href: string) => void;
  children?: ReactNode;
}) {
  const blocks = useMemo(() => parseMarkdown(text), [text]);
  return (
    <article className="chat-message from-agent" aria-label="Agent" aria-busy={live}>
      {tools.length > 0 && (
        <ul className="tool-chips" aria-label="Tool calls">
          {tools.map((tool) => (
            <li key={tool.id} className="tool-chip" data-state={tool.state} data-tool={tool.name} title={tool.name}>
              <ToolIcon state={tool.state} />
              <span className="tool-chip-label">{toolLabel(tool.name, tool.state)}</span>
            </li>
          ))}
        </ul>
      )}
      {text !== "" && <RichText blocks={blocks} onOpenLink={onOpenLink} />}
      {children}
    </article>
  );
}

const ICONS: Record<ToolState, string> = { running: "◌", done: "✓", failed: "✕", stopped: "–" };

function ToolIcon({ state }: { state: ToolState }) {
  return (
    <span className="tool-chip-icon" aria-hidden="true">
      {ICONS[state]}
    </span>
  );
}
