import { useEffect, useRef } from "react";
import type { ConversationSummary, DesktopApi } from "../../shared/desktop-api";
import { type Polled, usePolled } from "../components/use-polled";

/** The list changes when a reply ends or a conversation goes (both announced by `generation`); the period covers other devices. */
const LIST_POLL_MS = 30_000;

/**
 * The owner's conversations while the Agent view is on screen: asked for when it opens, every
 * 30 s, and whenever `generation` changes. Offline, nothing is asked (it would only fail): the
 * last list stays.
 */
export function useConversations(api: DesktopApi, offline: boolean, generation: number): Polled<ConversationSummary[]> {
  const offlineRef = useRef(offline);
  offlineRef.current = offline;
  const list = usePolled(async () => {
    if (offlineRef.current) throw new Error("offline");
    return api.listConversations();
  }, LIST_POLL_MS);
  const { refresh } = list;
  // The first generation is the load the poll starts with.
  const seen = useRef(generation);
  useEffect(() => {
    if (seen.current === generation) return;
    seen.current = generation;
    refresh();
  }, [generation, refresh]);
  return list;
}
