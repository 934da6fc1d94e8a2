import { type FormEvent, useEffect, useId, useState } from "react";
import type { DesktopApi, WebhookDeliveryItem, WebhookItem } from "../../shared/desktop-api";
import { ActionOutcome } from "../components/action-outcome";
import { ConfirmButton } from "../components/confirm-button";
import { ErrorNotice } from "../components/error-notice";
import { InputField } from "../components/field";
import { ShownOnce } from "../components/shown-once";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { fullTime } from "../notes/note-time";
import { deliveryStatusWords, eventWords, statusCodeWords, webhookName } from "./webhooks-format";

const WEBHOOKS_POLL_MS = 15_000;
/** The log's pace while a delivery is still being tried, and while none is. */
const LOG_BUSY_POLL_MS = 1_000;
const LOG_IDLE_POLL_MS = 10_000;

/** `set` with `item` in it or not: a new set, for React state. */
function withMember(set: ReadonlySet<string>, item: string, member: boolean): ReadonlySet<string> {
  const next = new Set(set);
  if (member) next.add(item);
  else next.delete(item);
  return next;
}

interface ShownSecret {
  readonly webhookId: string;
  readonly name: string;
  readonly secret: string;
}

/**
 * Webhooks (Standard Webhooks 1.0): endpoints the server POSTs events to, signed with a secret
 * shown once. Each endpoint can be sent a test, show its delivery log (status codes, errors, next
 * try), replay a finished delivery, rotate its secret, be turned off and on, and be removed.
 */
export function WebhooksPanel({ api, offline }: { api: DesktopApi; offline: boolean }) {
  const polled = usePolled(() => api.listWebhooks(), WEBHOOKS_POLL_MS);
  const [done, setDone] = useState<string | null>(null);
  const [secret, setSecret] = useState<ShownSecret | null>(null);
  const [openLogs, setOpenLogs] = useState<ReadonlySet<string>>(new Set());
  /** Bumped after a test or a replay, so an open log asks at once. */
  const [logGeneration, setLogGeneration] = useState(0);
  const action = useAction(polled.refresh);
  const webhooks = polled.data?.webhooks;

  const openLog = (id: string, open: boolean) => setOpenLogs((previous) => withMember(previous, id, open));
  const act = (key: string, work: () => Promise<string>) => {
    setDone(null);
    void action.run(key, async () => setDone(await work()));
  };
  const add = (url: string, events: string[], description: string) =>
    new Promise<boolean>((resolve) => {
      setDone(null);
      let succeeded = false;
      void action
        .run("add", async () => {
          if (!/^https?:\/\/./i.test(url)) throw new Error("The address must start with https:// (or http://).");
          const added = await api.addWebhook({ url, events, ...(description ? { description } : {}) });
          const name = webhookName(added.webhook);
          setSecret({ webhookId: added.webhook.id, name, secret: added.secret });
          setDone(`Added “${name}”. Copy its signing secret now: it is not shown again.`);
          succeeded = true;
        })
        .then(() => resolve(succeeded));
    });

  const title = <h3 id="webhooks-title">Webhooks</h3>;
  if (polled.data && (!polled.data.supported || polled.data.notAllowed)) {
    return (
      <section className="connections-panel" aria-labelledby="webhooks-title">
        {title}
        <p className="empty-state">{polled.data.notAllowed ?? "This server doesn't support webhooks yet."}</p>
      </section>
    );
  }

  return (
    <section className="connections-panel" aria-labelledby="webhooks-title">
      {title}
      <p className="hint">
        Addresses of yours that Tandem tells when something happens (a message arrives, a grant ends, a heartbeat run ends), signed the
        Standard Webhooks way so your receiver can check each one came from here.
      </p>
      {polled.error && !offline && <ErrorNotice message={`The webhooks could not be loaded: ${polled.error}`} onRetry={polled.refresh} />}
      {secret && <SecretNotice shown={secret} onDone={() => setSecret(null)} />}
      {webhooks === undefined ? (
        !polled.error && <p className="empty-state">Loading…</p>
      ) : webhooks.length === 0 ? (
        <p className="empty-state">No webhook yet.</p>
      ) : (
        <ul className="connection-list">
          {webhooks.map((webhook) => {
            const name = webhookName(webhook);
            return (
              <WebhookRow
                key={webhook.id}
                api={api}
                webhook={webhook}
                running={action.running}
                logOpen={openLogs.has(webhook.id)}
                logGeneration={logGeneration}
                onToggleLog={(open) => openLog(webhook.id, open)}
                onTest={() =>
                  act(`test:${webhook.id}`, async () => {
                    await api.testWebhook({ id: webhook.id });
                    openLog(webhook.id, true);
                    setLogGeneration((value) => value + 1);
                    return `Sent a test to “${name}”: its delivery log shows how the receiver answered.`;
                  })
                }
                onReplay={(delivery) =>
                  act(`replay:${delivery.id}`, async () => {
                    await api.replayWebhookDelivery({ id: webhook.id, deliveryId: delivery.id });
                    setLogGeneration((value) => value + 1);
                    return `Sending the ${eventWords(delivery.type).short} delivery to “${name}” again, with the same webhook-id.`;
                  })
                }
                onRotate={() =>
                  act(`rotate:${webhook.id}`, async () => {
                    const rotated = await api.rotateWebhookSecret({ id: webhook.id });
                    setSecret({ webhookId: webhook.id, name, secret: rotated.secret });
                    const until = rotated.webhook.previousSecretExpiresAt;
                    return `New signing secret for “${name}”: copy it now. The old one keeps signing beside it${until ? ` until ${fullTime(until)}` : " for 24 hours"}.`;
                  })
                }
                onSetEnabled={(enabled) =>
                  act(`${enabled ? "on" : "off"}:${webhook.id}`, async () => {
                    await api.setWebhookEnabled({ id: webhook.id, enabled });
                    return enabled
                      ? `Turned “${name}” on: its failures are forgotten and deliveries go out again.`
                      : `Turned “${name}” off: nothing is sent to it until you turn it on again.`;
                  })
                }
                onRemove={() =>
                  act(`remove:${webhook.id}`, async () => {
                    await api.removeWebhook({ id: webhook.id });
                    if (secret?.webhookId === webhook.id) setSecret(null);
                    openLog(webhook.id, false);
                    return `Removed “${name}” with its pending deliveries and its log.`;
                  })
                }
              />
            );
          })}
        </ul>
      )}
      <div className="webhook-outcome">
        <ActionOutcome error={action.error} done={done} />
      </div>
      <WebhookForm
        eventTypes={polled.data?.eventTypes ?? []}
        submitLabel={action.running === "add" ? "Adding…" : "Add webhook"}
        busy={action.running !== null}
        onSubmit={add}
      />
    </section>
  );
}

/** The secret of a webhook just added or rotated: shown this once, with a way to copy it. */
function SecretNotice({ shown, onDone }: { shown: ShownSecret; onDone: () => void }) {
  return (
    <ShownOnce title="Signing secret" what="secret" value={shown.secret} onDone={onDone}>
      The signing secret of “{shown.name}”. Give it to your receiver's Standard Webhooks library; it is shown only now and cannot be read
      again (rotate it for a new one).
    </ShownOnce>
  );
}

function WebhookRow({
  api,
  webhook,
  running,
  logOpen,
  logGeneration,
  onToggleLog,
  onTest,
  onReplay,
  onRotate,
  onSetEnabled,
  onRemove,
}: {
  api: DesktopApi;
  webhook: WebhookItem;
  running: string | null;
  logOpen: boolean;
  logGeneration: number;
  onToggleLog: (open: boolean) => void;
  onTest: () => void;
  onReplay: (delivery: WebhookDeliveryItem) => void;
  onRotate: () => void;
  onSetEnabled: (enabled: boolean) => void;
  onRemove: () => void;
}) {
  const busy = running !== null;
  const mine = (verb: string) => running === `${verb}:${webhook.id}`;
  const name = webhookName(webhook);
  return (
    <li className="connection-row" aria-label={name}>
      <div className="connection-head">
        <span className="connection-name">{name}</span>
        <span className="status-pill" data-status={webhook.enabled ? (webhook.failingSince ? "needs_reauth" : "connected") : "error"}>
          {webhook.enabled ? (webhook.failingSince ? "Failing" : "On") : "Off"}
        </span>
      </div>
      {webhook.description && <div className="hint connection-url">{webhook.url}</div>}
      {webhook.disabledReason && <p className="connection-detail">{webhook.disabledReason}</p>}
      {webhook.enabled && webhook.failingSince && (
        <p className="connection-detail">No delivery has succeeded since {fullTime(webhook.failingSince)}; they are being tried again.</p>
      )}
      <div className="hint">{webhook.events.map((event) => eventWords(event).short).join(" · ")}</div>
      {webhook.previousSecretExpiresAt && (
        <div className="hint">The previous secret also signs until {fullTime(webhook.previousSecretExpiresAt)}.</div>
      )}
      <div className="connection-actions">
        <button type="button" disabled={busy || !webhook.enabled} onClick={onTest}>
          {mine("test") ? "Sending…" : "Send test"}
        </button>
        <button type="button" aria-expanded={logOpen} onClick={() => onToggleLog(!logOpen)}>
          {logOpen ? "Hide deliveries" : "Deliveries"}
        </button>
        <ConfirmButton
          label="Rotate secret"
          question={`A new signing secret for “${name}”? The old one keeps signing beside it for 24 hours, while your receiver switches.`}
          disabled={busy}
          onConfirm={onRotate}
        />
        <button type="button" disabled={busy} onClick={() => onSetEnabled(!webhook.enabled)}>
          {mine("on") ? "Turning on…" : mine("off") ? "Turning off…" : webhook.enabled ? "Turn off" : "Turn on"}
        </button>
        <ConfirmButton
          label="Remove"
          question={`Remove “${name}”? Nothing more is sent to it, and its delivery log is deleted.`}
          disabled={busy}
          onConfirm={onRemove}
        />
      </div>
      {logOpen && <DeliveryLog api={api} webhook={webhook} generation={logGeneration} running={running} onReplay={onReplay} />}
    </li>
  );
}

/** The endpoint's newest deliveries, each with its attempts' status codes; asked for every second while one is still being tried. */
function DeliveryLog({
  api,
  webhook,
  generation,
  running,
  onReplay,
}: {
  api: DesktopApi;
  webhook: WebhookItem;
  generation: number;
  running: string | null;
  onReplay: (delivery: WebhookDeliveryItem) => void;
}) {
  const [busyPace, setBusyPace] = useState(true);
  const polled = usePolled(() => api.listWebhookDeliveries({ id: webhook.id }), busyPace ? LOG_BUSY_POLL_MS : LOG_IDLE_POLL_MS);
  const deliveries = polled.data;
  const { refresh } = polled;
  useEffect(() => {
    setBusyPace(deliveries === undefined || deliveries.some((delivery) => delivery.status === "pending"));
  }, [deliveries]);
  useEffect(() => {
    if (generation > 0) refresh();
  }, [generation, refresh]);
  return (
    <section className="webhook-log" aria-label={`Deliveries to ${webhookName(webhook)}`}>
      {polled.error && <ErrorNotice message={`The deliveries could not be loaded: ${polled.error}`} onRetry={refresh} />}
      {deliveries === undefined ? (
        !polled.error && <p className="empty-state">Loading…</p>
      ) : deliveries.length === 0 ? (
        <p className="empty-state">Nothing sent yet. Send a test to see how the receiver answers.</p>
      ) : (
        <ul className="webhook-deliveries">
          {deliveries.map((delivery) => (
            <li key={delivery.id} className="webhook-delivery" data-status={delivery.status} aria-label={delivery.id}>
              <div className="webhook-delivery-head">
                <span className="webhook-delivery-type">{eventWords(delivery.type).short}</span>
                <span className="webhook-delivery-status">{deliveryStatusWords(delivery)}</span>
                <span className="hint">{fullTime(delivery.createdAt)}</span>
                {delivery.status !== "pending" && (
                  <button type="button" disabled={running !== null} onClick={() => onReplay(delivery)}>
                    {running === `replay:${delivery.id}` ? "Sending…" : "Send again"}
                  </button>
                )}
              </div>
              {delivery.attempts.length > 0 && (
                <ol className="webhook-attempts">
                  {delivery.attempts.map((attempt, index) => (
                    <li key={`${attempt.attemptedAt}-${index}`}>
                      <span className="webhook-code" data-ok={attempt.statusCode !== null && attempt.statusCode < 300}>
                        {statusCodeWords(attempt.statusCode)}
                      </span>{" "}
                      <span className="hint">
                        {fullTime(attempt.attemptedAt)} · {attempt.durationMs} ms
                      </span>
                      {attempt.error && attempt.error !== `HTTP ${attempt.statusCode}` && (
                        <span className="webhook-attempt-error"> {attempt.error}</span>
                      )}
                    </li>
                  ))}
                </ol>
              )}
              <div className="hint webhook-delivery-id">webhook-id {delivery.id}</div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** Address, events and an optional description; what was typed stays when the server refuses it. */
function WebhookForm({
  eventTypes,
  submitLabel,
  busy,
  onSubmit,
}: {
  eventTypes: readonly string[];
  submitLabel: string;
  busy: boolean;
  onSubmit: (url: string, events: string[], description: string) => Promise<boolean>;
}) {
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [events, setEvents] = useState<ReadonlySet<string>>(new Set(["message.received"]));
  const titleId = useId();
  const toggle = (event: string, on: boolean) => setEvents((previous) => withMember(previous, event, on));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const picked = eventTypes.filter((type) => events.has(type));
    if (await onSubmit(url.trim(), picked, description.trim())) {
      setUrl("");
      setDescription("");
    }
  };
  const picked = eventTypes.filter((type) => events.has(type)).length;
  return (
    <form className="server-form webhook-form" aria-labelledby={titleId} onSubmit={(event) => void submit(event)}>
      <h4 id={titleId}>Add a webhook</h4>
      <InputField
        label="Address"
        type="url"
        value={url}
        placeholder="https://example.com/tandem-webhook"
        autoComplete="off"
        spellCheck={false}
        onChange={(event) => setUrl(event.target.value)}
      />
      <InputField
        label="Description (optional)"
        value={description}
        maxLength={500}
        placeholder="Ops alerts"
        onChange={(event) => setDescription(event.target.value)}
      />
      <fieldset className="webhook-events">
        <legend>Events</legend>
        {/* The events sent today first, those announced for later after them. */}
        {[...eventTypes]
          .sort((a, b) => Number(eventWords(a).later ?? false) - Number(eventWords(b).later ?? false))
          .map((type) => {
            const words = eventWords(type);
            return (
              <label key={type} title={type}>
                <input type="checkbox" checked={events.has(type)} onChange={(event) => toggle(type, event.target.checked)} />
                {words.long}
                {words.later && <span className="hint"> (not sent yet)</span>}
              </label>
            );
          })}
      </fieldset>
      <div className="server-form-buttons">
        <button type="submit" disabled={busy || url.trim() === "" || picked === 0}>
          {submitLabel}
        </button>
        {picked === 0 && <span className="hint">Pick at least one event.</span>}
      </div>
    </form>
  );
}
