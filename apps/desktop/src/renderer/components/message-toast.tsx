import { useEffect, useRef, useState } from "react";
import type { DesktopApi } from "../../shared/desktop-api";

/**
 * A message that arrived while the page is open, in the corner: who or what it is from, its first
 * words (untrusted: text only) and a way to open it or dismiss it. Web mode's stand-in for a system
 * notification (the heartbeat's and the inbox's).
 */
export function MessageToast({
  label,
  title,
  preview,
  openLabel,
  className,
  onDismiss,
  onOpen,
}: {
  /** What it is, for assistive technology ("New message"). */
  label: string;
  title: string;
  preview: string;
  openLabel: string;
  className?: string;
  onDismiss: () => void;
  onOpen: () => void;
}) {
  return (
    <div className={className ? `heartbeat-toast ${className}` : "heartbeat-toast"} role="status" aria-label={label}>
      <p>
        <strong dir="auto">{title}</strong>
      </p>
      {preview && (
        <p className="heartbeat-toast-preview" dir="auto">
          {preview}
        </p>
      )}
      <div className="heartbeat-toast-actions">
        <button type="button" onClick={onDismiss}>
          Dismiss
        </button>
        <button
          type="button"
          className="primary"
          onClick={() => {
            onDismiss();
            onOpen();
          }}
        >
          {openLabel}
        </button>
      </div>
    </div>
  );
}

/** Whether the page runs in web mode (a browser), where toasts stand in for system notifications. */
export function useWebMode(api: DesktopApi): boolean {
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

/**
 * The announcement to show: the newest `latest` the host reported after the page loaded (what it had
 * announced before is not shown again), unless it is in the conversation on screen (`showing`).
 * `idOf` tells one announcement from the next. The setter dismisses it (null).
 */
export function useFreshAnnouncement<T extends { readonly conversationId: number }>(
  latest: T | null | undefined,
  idOf: (item: T) => number,
  showing: number | null,
): [T | null, (item: T | null) => void] {
  const seen = useRef<number | null | undefined>(undefined);
  const [shown, setShown] = useState<T | null>(null);
  const id = latest ? idOf(latest) : latest;
  // `id` stands for `latest`, which is a new object on every status poll.
  useEffect(() => {
    if (id === undefined) return;
    const first = seen.current === undefined;
    const fresh = latest && id !== seen.current;
    seen.current = id ?? seen.current ?? null;
    if (!first && fresh && latest.conversationId !== showing) setShown(latest);
  }, [id, showing]);
  return [shown, setShown];
}
