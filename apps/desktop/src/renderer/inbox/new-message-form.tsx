import { useState } from "react";
import { type DesktopApi, INBOX_MESSAGE_MAX, type InboxPerson } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { Field, InputField } from "../components/field";
import { isSendKey, SendHint } from "../components/send-on-enter";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { useInboxSession } from "./inbox-session";

const CONTACTS_POLL_MS = 60_000;
/** The choice in "To" that shows a field for a username. */
const SOMEONE_ELSE = "someone-else";

function personOption(person: InboxPerson): string {
  return person.name === person.username ? `@${person.username}` : `${person.name} (@${person.username})`;
}

/**
 * A new message to a contact (their inbox: the server's human mode, never their agent) or to a group.
 * The text is the session's `new` draft, kept when the message cannot be sent.
 */
export function NewMessageForm({ api, onSent }: { api: DesktopApi; onSent: () => void }) {
  const session = useInboxSession();
  const contacts = usePolled(() => api.listInboxContacts(), CONTACTS_POLL_MS);
  const groups = usePolled(() => api.listInbox({ view: "group" }), CONTACTS_POLL_MS);
  const people = contacts.data?.contacts ?? [];
  const [choice, setChoice] = useState("");
  const [typed, setTyped] = useState("");
  const action = useAction();
  const typing = choice === SOMEONE_ELSE || (contacts.data !== undefined && people.length === 0 && choice === "");
  const to = typing ? typed.trim() : choice;
  const message = session.draft("new");
  const canSend = action.running === null && to !== "" && message.trim() !== "";

  const send = () =>
    void action.run("send", async () => {
      const { conversationId } = await api.sendInboxMessage({ to, message });
      session.setDraft("new", "");
      onSent();
      session.open({ kind: "conversation", conversationId });
    });

  return (
    <form
      className="inbox-form"
      aria-label="New message"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <h3>New message</h3>
      <p className="hint">It goes to the person's inbox (or the group), from you. Their agent does not answer it.</p>
      {contacts.data?.notAllowed && <p className="hint">{contacts.data.notAllowed}</p>}
      <Field label="To">
        {(id) => (
          <select id={id} value={typing && choice === "" ? SOMEONE_ELSE : choice} onChange={(event) => setChoice(event.target.value)}>
            <option value="">Choose…</option>
            {people.length > 0 && (
              <optgroup label="People">
                {people.map((person) => (
                  <option key={person.userId} value={person.username}>
                    {personOption(person)}
                  </option>
                ))}
              </optgroup>
            )}
            {(groups.data?.conversations.length ?? 0) > 0 && (
              <optgroup label="Groups">
                {groups.data?.conversations.map((group) => (
                  <option key={group.conversationId} value={`group:${group.conversationId}`}>
                    {group.title}
                  </option>
                ))}
              </optgroup>
            )}
            <option value={SOMEONE_ELSE}>Someone else (type a username)</option>
          </select>
        )}
      </Field>
      {typing && (
        <InputField
          label="Username"
          value={typed}
          autoComplete="off"
          spellCheck={false}
          placeholder="their username"
          onChange={(event) => setTyped(event.target.value)}
        />
      )}
      <Field label="Message">
        {(id) => (
          <textarea
            id={id}
            rows={5}
            maxLength={INBOX_MESSAGE_MAX}
            value={message}
            aria-describedby="inbox-new-message-hint"
            onChange={(event) => session.setDraft("new", event.target.value)}
            onKeyDown={(event) => {
              // The rule of every message box: Enter sends, Shift+Enter is a new line.
              if (!isSendKey(event)) return;
              event.preventDefault();
              if (canSend) send();
            }}
          />
        )}
      </Field>
      {action.error && <ErrorNotice message={`Not sent: ${action.error}`} />}
      <div className="inbox-form-actions">
        <SendHint id="inbox-new-message-hint" />
        <button type="submit" className="primary" disabled={!canSend}>
          {action.running ? "Sending…" : "Send"}
        </button>
      </div>
    </form>
  );
}

/** A new group of the owner's contacts; the owner is its admin. */
export function NewGroupForm({ api, onCreated }: { api: DesktopApi; onCreated: () => void }) {
  const session = useInboxSession();
  const contacts = usePolled(() => api.listInboxContacts(), CONTACTS_POLL_MS);
  const people = contacts.data?.contacts ?? [];
  const [name, setName] = useState("");
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [typed, setTyped] = useState("");
  const action = useAction();
  const listed = people.length > 0;
  const members = listed
    ? [...chosen]
    : typed
        .split(/[\s,]+/)
        .map((word) => word.replace(/^@/, ""))
        .filter(Boolean);

  const create = () =>
    void action.run("create", async () => {
      const { conversationId } = await api.createInboxGroup({ name, members });
      onCreated();
      session.open({ kind: "conversation", conversationId });
    });

  return (
    <form
      className="inbox-form"
      aria-label="New group"
      onSubmit={(event) => {
        event.preventDefault();
        create();
      }}
    >
      <h3>New group</h3>
      <p className="hint">A conversation with several of your contacts. You can add people you are connected with.</p>
      <InputField label="Name" value={name} maxLength={100} onChange={(event) => setName(event.target.value)} />
      {contacts.data === undefined && !contacts.error ? (
        <p className="empty-state">Loading your contacts…</p>
      ) : listed ? (
        <fieldset className="inbox-members">
          <legend>Members</legend>
          {people.map((person) => (
            <label key={person.userId}>
              <input
                type="checkbox"
                checked={chosen.has(person.username)}
                onChange={(event) => {
                  const next = new Set(chosen);
                  if (event.target.checked) next.add(person.username);
                  else next.delete(person.username);
                  setChosen(next);
                }}
              />
              <span dir="auto">{personOption(person)}</span>
            </label>
          ))}
        </fieldset>
      ) : (
        <>
          {contacts.data?.notAllowed && <p className="hint">{contacts.data.notAllowed}</p>}
          <InputField label="Members (usernames, separated by commas)" value={typed} onChange={(event) => setTyped(event.target.value)} />
        </>
      )}
      {action.error && <ErrorNotice message={`The group was not created: ${action.error}`} />}
      <div className="inbox-form-actions">
        <button type="submit" className="primary" disabled={action.running !== null || name.trim() === "" || members.length === 0}>
          {action.running ? "Creating…" : "Create group"}
        </button>
      </div>
    </form>
  );
}
