import { useEffect, useRef, useState } from "react";
import type { DesktopApi, HeartbeatDelivery } from "../../shared/desktop-api";
import { useHostStatus } from "../layout/host-status";

/**
 * In web mode, a heartbeat message delivered while the page is open says so in a toast (Electron
 * shows a system notification instead): its first words, as text, and a way to open it. What the
 * host had announced before the page loaded is not shown again; reading the messages (the unread
 * count falling to zero) dismisses it.
 */
export function HeartbeatToast({
  api,
  showing,
  onOpen,
}: {
  api: DesktopApi;
  /** The conversation on screen, if any: a message into it needs no toast. */
  showing: number | null;
  onOpen: (conversationId: number) => void;
}) {
  const web = useWebMode(api);
  const { status } = useHostStatus();
  const delivery = status?.heartbeatDelivery;
  const unread = status?.agentUnread ?? 0;
  const seen = useRef<number | null | undefined>(undefined);
  const [shown, setShown] = useState<HeartbeatDelivery | null>(null);

  useEffect(() => {
    if (delivery === undefined) return;
    const first = seen.current === undefined;
    const fresh = delivery !== null && delivery.runId !== seen.current;
    seen.current = delivery?.runId ?? seen.current ?? null;
    if (!first && fresh && delivery.conversationId !== showing) setShown(delivery);
  }, [delivery, showing]);
  useEffect(() => {
    if (unread === 0) setShown(null);
  }, [unread]);

  if (!web || !shown) return null;
  return (
    <div className="heartbeat-toast" role="status" aria-label="New message from your agent">
      <p>
        <strong>A message from your agent</strong>
      </p>
      {shown.preview && (
        <p className="heartbeat-toast-preview" dir="auto">
          {shown.preview}
        </p>
      )}
      <div className="heartbeat-toast-actions">
        <button type="button" onClick={() => setShown(null)}>
          Dismiss
        </button>
        <button
          type="button"
          className="primary"
          onClick={() => {
            setShown(null);
            onOpen(shown.conversationId);
          }}
        >
          Read it
        </button>
      </div>
    </div>
  );
}

function useWebMode(api: DesktopApi): boolean {
  const [web, setWeb] = useState(false);
  useEffect(() => {
    let mounted = true;
    api.getAppInfo().then(
      (info) => mounted && setWeb(info.mode === "web"),
      () => {},
    );
    return () => {
      mounted = false;
    };
  }, [api]);
  return web;
}
