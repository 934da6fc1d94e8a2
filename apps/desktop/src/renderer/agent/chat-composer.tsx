import { type FormEvent, type KeyboardEvent, useEffect, useRef } from "react";
import { DRAFT_TEXT_MAX } from "../../shared/desktop-api";
import { isSendKey, SendHint } from "../components/send-on-enter";
import { useChatSession } from "./chat-session";

/**
 * The message box: Enter sends, Shift+Enter starts a new line (as in the Inbox, said under the box). While a reply comes, Stop takes
 * Send's place; the box stays editable (a next message may be written meanwhile) and keeps its
 * text until the server has accepted it, so nothing typed is lost to a failure or to being offline.
 */
export function ChatComposer() {
  const chat = useChatSession();
  const box = useRef<HTMLTextAreaElement>(null);
  const canSend = !chat.busy && !chat.offline && chat.draft.trim() !== "";

  // The reply is over: the box is where the owner goes next.
  const wasBusy = useRef(chat.busy);
  useEffect(() => {
    if (wasBusy.current && !chat.busy) box.current?.focus();
    wasBusy.current = chat.busy;
  }, [chat.busy]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (canSend) chat.send();
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (!isSendKey(event)) return;
    event.preventDefault();
    if (canSend) chat.send();
  };

  return (
    <form className="chat-composer" onSubmit={submit}>
      <div className="chat-composer-field">
        <textarea
          ref={box}
          aria-label="Message"
          aria-describedby="chat-send-hint"
          placeholder={chat.offline ? "Offline: write now, send when the server is back" : "Ask your agent…"}
          rows={3}
          maxLength={DRAFT_TEXT_MAX}
          value={chat.draft}
          onChange={(event) => chat.setDraft(event.target.value)}
          onKeyDown={onKeyDown}
        />
        <SendHint id="chat-send-hint" />
      </div>
      {chat.busy ? (
        <button type="button" className="danger" onClick={chat.stop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="primary" disabled={!canSend}>
          Send
        </button>
      )}
    </form>
  );
}
