import { useEffect } from "react";
import type { DesktopApi } from "../../shared/desktop-api";
import { MessageToast, useFreshAnnouncement, useWebMode } from "../components/message-toast";
import { useHostStatus } from "../layout/host-status";

/**
 * In web mode, a message from someone arriving while the page is open says so in a toast (Electron
 * shows a system notification instead): who wrote, where, its first words as text, and a way to open
 * it. Not for the conversation on screen; what arrived before the page loaded is not shown again.
 */
export function InboxToast({
  api,
  showing,
  onOpen,
}: {
  api: DesktopApi;
  /** The inbox conversation on screen, if any. */
  showing: number | null;
  onOpen: (conversationId: number) => void;
}) {
  const web = useWebMode(api);
  const { status } = useHostStatus();
  const arrival = status?.inboxArrival;
  const [shown, setShown] = useFreshAnnouncement(arrival, (item) => item.messageId, showing);
  // Opening the conversation some other way dismisses it.
  useEffect(() => {
    if (shown && shown.conversationId === showing) setShown(null);
  }, [shown, showing]);

  if (!web || !shown) return null;
  return (
    <MessageToast
      label="New message"
      title={`${shown.from}${shown.groupName ? ` in ${shown.groupName}` : ""}`}
      preview={shown.preview}
      openLabel="Open"
      className="inbox-toast"
      onDismiss={() => setShown(null)}
      onOpen={() => onOpen(shown.conversationId)}
    />
  );
}
