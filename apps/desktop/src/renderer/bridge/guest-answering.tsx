import { useEffect, useState } from "react";
import type { BridgeStatus, DesktopApi } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { useAction } from "../components/use-action";
import { RUNTIME_LABELS } from "./bridge-labels";

/**
 * The owner's switch for answering guests of share links from this computer: off by default. It
 * applies to links created with "answered by your machine" (`localAgent`); the runtime answers
 * them without any tool, and the server's agent answers whatever this computer does not answer in
 * time. The checkbox shows the saved setting at once; the polled status confirms it within a second.
 */
export function GuestAnswering({ api, bridge }: { api: DesktopApi; bridge: BridgeStatus }) {
  const action = useAction();
  // What the last change answered, shown until the polled status says the same.
  const [saved, setSaved] = useState<boolean | null>(null);
  useEffect(() => {
    if (saved !== null && bridge.answerGuests === saved) setSaved(null);
  }, [bridge.answerGuests, saved]);
  const enabled = saved ?? bridge.answerGuests;
  const runtime = bridge.runtime ? RUNTIME_LABELS[bridge.runtime] : "your coding agent";
  const toggle = (next: boolean) =>
    action.run("answer-guests", async () => {
      const status = await api.setBridgeGuestAnswering({ enabled: next });
      setSaved(status.answerGuests);
    });

  return (
    <section aria-labelledby="bridge-guests-heading">
      <h3 id="bridge-guests-heading">Guests on your share links</h3>
      {action.error && <ErrorNotice message={action.error} />}
      <label className="bridge-guests-toggle">
        <input
          type="checkbox"
          checked={enabled}
          disabled={action.running !== null}
          aria-busy={action.running !== null}
          onChange={(event) => void toggle(event.target.checked)}
        />
        Answer guests from this computer
      </label>
      <p className="bridge-hint" data-testid="bridge-guests-summary">
        {enabled
          ? `On: guests of links set to be answered by your machine get ${runtime} on this computer, with no tools: it can only answer in words. If it does not answer in time, your server's agent does.`
          : "Off: your server's agent answers every guest, under what each link allows."}
      </p>
      {enabled && bridge.answerGuestsNote && (
        <p className="bridge-runtime-missing" role="status">
          {bridge.answerGuestsNote}
        </p>
      )}
    </section>
  );
}
