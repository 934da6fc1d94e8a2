import { useEffect } from "react";
import type { DesktopApi } from "../../shared/desktop-api";
import { MessageToast, useFreshAnnouncement, useWebMode } from "../components/message-toast";
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
  const [shown, setShown] = useFreshAnnouncement(delivery, (item) => item.runId, showing);
  useEffect(() => {
    if (unread === 0) setShown(null);
  }, [unread]);

  if (!web || !shown) return null;
  return (
    <MessageToast
      label="New message from your agent"
      title="A message from your agent"
      preview={shown.preview}
      openLabel="Read it"
      onDismiss={() => setShown(null)}
      onOpen={() => onOpen(shown.conversationId)}
    />
  );
}
