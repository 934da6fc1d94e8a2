import { countOf } from "@tandem/core/counts";
import { useState } from "react";
import type { DesktopApi, ShareLinkExpiry, ShareLinkInput, ShareLinkItem } from "../../shared/desktop-api";
import { ActionOutcome } from "../components/action-outcome";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNotice } from "../components/error-notice";
import { Field, InputField } from "../components/field";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { useHostStatus } from "../layout/host-status";
import { fullTime } from "../notes/note-time";
import { GuestConversationsPanel } from "./guest-conversations-panel";
// The Connections section's layout (panels in columns, the offline notice), with a few rules of its own.
import "../connections/connections.css";
import "./share-links.css";

const LINKS_POLL_MS = 30_000;

export const EXPIRY_WORDS: Record<ShareLinkExpiry, string> = {
  "1h": "1 hour",
  "24h": "1 day",
  "7d": "7 days",
  "30d": "30 days",
  "90d": "90 days",
  never: "never",
};
const EXPIRIES = Object.keys(EXPIRY_WORDS) as ShareLinkExpiry[];

const NEW_LINK: ShareLinkInput = {
  label: "",
  expiresIn: "30d",
  notesAccess: "read",
  todos: false,
  requireSignIn: true,
  identity: true,
  localAgent: false,
};

/** Who may come in, and how much the link was used: "Anyone with the link · 1 visitor · 1 conversation · 2 messages" (questions and answers). */
function usageWords(link: ShareLinkItem): string {
  const who = link.requireSignIn ? "Guests sign in" : "Anyone with the link";
  return [who, countOf(link.visitors, "visitor"), countOf(link.conversations, "conversation"), countOf(link.messages, "message")].join(
    " · ",
  );
}

/** "Expires 3 Dec 2026, 10:00", "Never expires". */
function expiryWords(link: ShareLinkItem): string {
  return link.expiresAt ? `Expires ${fullTime(link.expiresAt)}` : "Never expires";
}

/**
 * The Share links section: links that let guests talk to the owner's agent (within what each link
 * gives it), created, copied, renewed and revoked here, and what guests said on them. Kept on the
 * server: offline, the lists stay as they were and changes fail in words.
 */
export function ShareLinksView({ api }: { api: DesktopApi }) {
  const offline = useHostStatus().status?.sync.state === "offline";
  const links = usePolled(() => api.listShareLinks(), LINKS_POLL_MS);
  const [guestsOf, setGuestsOf] = useState<string | null>(null);

  if (links.data && !links.data.supported) {
    return <p className="empty-state">This server doesn't support share links yet.</p>;
  }
  return (
    <div className="connections-view">
      <p className="hint connections-intro">
        A share link lets people talk to your agent without your key. It answers only from what the link allows; revoke it and it stops at
        once.
      </p>
      {offline && (
        <p className="connections-offline" role="status">
          Share links are kept on the server, which can't be reached right now. What you see is how things stood.
        </p>
      )}
      {links.data?.notAllowed ? (
        <p className="empty-state">{links.data.notAllowed}</p>
      ) : (
        <div className="connections-columns">
          <div className="connections-column">
            <CreateLinkPanel api={api} onCreated={links.refresh} />
            <LinksPanel
              api={api}
              links={links.data?.links}
              error={offline ? null : links.error}
              refresh={links.refresh}
              onGuests={setGuestsOf}
            />
          </div>
          <div className="connections-column">
            <GuestConversationsPanel api={api} shareToken={guestsOf} onAll={() => setGuestsOf(null)} offline={offline} />
          </div>
        </div>
      )}
    </div>
  );
}

function CreateLinkPanel({ api, onCreated }: { api: DesktopApi; onCreated: () => void }) {
  const [form, setForm] = useState<ShareLinkInput>(NEW_LINK);
  const [created, setCreated] = useState<ShareLinkItem | null>(null);
  const action = useAction();
  const set = <K extends keyof ShareLinkInput>(key: K, value: ShareLinkInput[K]) => setForm((previous) => ({ ...previous, [key]: value }));
  const create = () =>
    void action.run("create", async () => {
      setCreated(null);
      const link = await api.createShareLink(form);
      setCreated(link);
      setForm(NEW_LINK);
      onCreated();
    });
  return (
    <section className="connections-panel" aria-labelledby="share-create-title">
      <h3 id="share-create-title">New share link</h3>
      <form
        className="share-form"
        onSubmit={(event) => {
          event.preventDefault();
          create();
        }}
      >
        <InputField
          label="Label (guests see it)"
          value={form.label}
          maxLength={200}
          onChange={(event) => set("label", event.target.value)}
        />
        <Field label="Expires after">
          {(id) => (
            <select id={id} value={form.expiresIn} onChange={(event) => set("expiresIn", event.target.value as ShareLinkExpiry)}>
              {EXPIRIES.map((expiry) => (
                <option key={expiry} value={expiry}>
                  {expiry === "never" ? "Never" : EXPIRY_WORDS[expiry]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <fieldset className="share-capabilities">
          <legend>Your agent may, for these guests</legend>
          <label>
            <input type="radio" name="notes" checked={form.notesAccess === "read"} onChange={() => set("notesAccess", "read")} />
            Read your notes
          </label>
          <label>
            <input type="radio" name="notes" checked={form.notesAccess === "write"} onChange={() => set("notesAccess", "write")} />
            Read and write your notes
          </label>
          <label>
            <input type="checkbox" checked={form.todos} onChange={(event) => set("todos", event.target.checked)} />
            Read your todos
          </label>
        </fieldset>
        <fieldset className="share-capabilities">
          <legend>Guests</legend>
          <label>
            <input type="checkbox" checked={form.requireSignIn} onChange={(event) => set("requireSignIn", event.target.checked)} />
            Must sign in with a Tandem account
          </label>
          <label>
            <input type="checkbox" checked={form.identity} onChange={(event) => set("identity", event.target.checked)} />
            See your name
          </label>
          <label>
            <input type="checkbox" checked={form.localAgent} onChange={(event) => set("localAgent", event.target.checked)} />
            Answer from this computer's coding agent
          </label>
          {form.localAgent && (
            <p className="hint">
              While this computer's bridge is paired and "Answer guests from this computer" is on in Bridge, its coding agent answers guests
              (with no tools); otherwise the server's agent does, after a short wait.
            </p>
          )}
        </fieldset>
        {action.error && <ErrorNotice message={`The link was not created: ${action.error}`} />}
        <div className="share-actions">
          <button type="submit" className="primary" disabled={action.running !== null}>
            {action.running ? "Creating…" : "Create link"}
          </button>
        </div>
      </form>
      {created && (
        <div className="share-created" role="status">
          <p>
            Created “{created.label || "Untitled link"}”. {created.capabilities.join(" · ")}.
          </p>
          <CopyLink url={created.url} />
        </div>
      )}
    </section>
  );
}

/** The link as text, and a button that copies it (saying so, or how to copy it by hand when the browser refuses). */
function CopyLink({ url }: { url: string }) {
  const [said, setSaid] = useState<string | null>(null);
  const copy = () => {
    navigator.clipboard.writeText(url).then(
      () => setSaid("Link copied."),
      () => setSaid("This window may not copy by itself: select the link and copy it."),
    );
  };
  return (
    <div className="share-copy">
      <input className="share-url" readOnly value={url} aria-label="Link" onFocus={(event) => event.target.select()} />
      <button type="button" onClick={copy}>
        Copy link
      </button>
      {said && (
        <span className="hint" role="status">
          {said}
        </span>
      )}
    </div>
  );
}

function LinksPanel({
  api,
  links,
  error,
  refresh,
  onGuests,
}: {
  api: DesktopApi;
  links: readonly ShareLinkItem[] | undefined;
  error: string | null;
  refresh: () => void;
  onGuests: (shareToken: string) => void;
}) {
  const action = useAction(refresh);
  const [done, setDone] = useState<string | null>(null);
  const [renewFor, setRenewFor] = useState<Record<number, ShareLinkExpiry>>({});
  const name = (link: ShareLinkItem) => link.label || "Untitled link";
  const renew = (link: ShareLinkItem) => {
    const expiresIn = renewFor[link.id] ?? "30d";
    setDone(null);
    void action.run(`renew:${link.id}`, async () => {
      const renewed = await api.renewShareLink({ id: link.id, expiresIn });
      setDone(`Renewed “${name(link)}”: ${renewed.expiresAt ? `it now expires ${fullTime(renewed.expiresAt)}` : "it never expires"}.`);
    });
  };
  const revoke = (link: ShareLinkItem) => {
    setDone(null);
    void action.run(`revoke:${link.id}`, async () => {
      await api.revokeShareLink({ id: link.id });
      setDone(`Revoked “${name(link)}”: its page and chat no longer answer.`);
    });
  };
  return (
    <section className="connections-panel" aria-labelledby="share-links-title">
      <h3 id="share-links-title">Your links</h3>
      {error && <ErrorNotice message={`The links could not be loaded: ${error}`} onRetry={refresh} />}
      {links === undefined ? (
        !error && <p className="empty-state">Loading…</p>
      ) : links.length === 0 ? (
        <p className="empty-state">No active share link.</p>
      ) : (
        <ul className="share-list">
          {links.map((link) => (
            <li key={link.id} className="share-row" aria-label={name(link)}>
              <div className="share-row-head">
                <span className="share-name" dir="auto">
                  {name(link)}
                </span>
                <span className="hint">{expiryWords(link)}</span>
              </div>
              <CopyLink url={link.url} />
              <div className="hint">{link.capabilities.join(" · ")}</div>
              <div className="hint">{usageWords(link)}</div>
              <div className="share-actions">
                <button type="button" onClick={() => onGuests(link.token)}>
                  Visitors
                </button>
                <label className="share-renew">
                  <span>Renew for</span>
                  <select
                    aria-label={`Renew “${name(link)}” for`}
                    value={renewFor[link.id] ?? "30d"}
                    onChange={(event) => setRenewFor({ ...renewFor, [link.id]: event.target.value as ShareLinkExpiry })}
                  >
                    {EXPIRIES.map((expiry) => (
                      <option key={expiry} value={expiry}>
                        {expiry === "never" ? "ever" : EXPIRY_WORDS[expiry]}
                      </option>
                    ))}
                  </select>
                </label>
                <button type="button" disabled={action.running !== null} onClick={() => renew(link)}>
                  Renew
                </button>
                <ConfirmButton
                  label="Revoke"
                  question={`Revoke “${name(link)}”? Its page and chat stop answering at once; guests keep nothing.`}
                  disabled={action.running !== null}
                  onConfirm={() => revoke(link)}
                />
              </div>
            </li>
          ))}
        </ul>
      )}
      <ActionOutcome error={action.error} done={done} />
    </section>
  );
}
