import { useEffect, useState } from "react";
import type { DesktopApi } from "../../shared/desktop-api";
import { decodeWorkspaceOutline } from "../../shared/workspace-outline";
import { ownerPause } from "../components/owner-pause";
import { peekEarly, takeEarly } from "../early-calls";
import { type Workspace, workspaceFromOutline } from "./workspace-model";

/**
 * When the live workspace document is opened after the first view: once the owner has left the page
 * alone this long, and at the latest {@link LIVE_WORKSPACE_MAX_DELAY_MS} after it. With tens of
 * thousands of notes loading it takes a while on both sides of the local hub (one Yjs document with
 * an entry per note), and what the owner asked for first (the note they clicked) goes first.
 */
export const LIVE_WORKSPACE_IDLE_MS = 1_000;
export const LIVE_WORKSPACE_MAX_DELAY_MS = 5_000;
/**
 * When the whole outline is read after its first screen: reading, sending and parsing a few MB (20,000
 * notes) takes the page's thread for a few hundred ms, which should not delay the owner's first click.
 */
export const WHOLE_OUTLINE_IDLE_MS = 300;
export const WHOLE_OUTLINE_MAX_DELAY_MS = 2_000;

export interface FirstView {
  /** The outline saved on this machine, as the notes view reads a workspace; null: none (or not read yet). */
  readonly outline: Workspace | null;
  /** Whether `outline` holds every note (the whole outline), not just the first screen's. */
  readonly outlineComplete: boolean;
  /** Whether to open the live workspace document now. */
  readonly openLive: boolean;
}

/**
 * The notes view's first view: the workspace's outline (`getWorkspaceOutline`), shown at once (its
 * first screen, then the whole of it), and when to open the live document, which replaces it.
 * Without an outline the document opens at once.
 */
export function useFirstView(api: DesktopApi): FirstView {
  // The first screen, when its answer is already in as the view first renders (see main.tsx).
  const [early] = useState(() => {
    const text = peekEarly(api, "getOutlineFirstScreen");
    const first = text ? decodeWorkspaceOutline(text) : null;
    return first ? workspaceFromOutline(first) : null;
  });
  const [outline, setOutline] = useState<Workspace | null>(early);
  const [outlineComplete, setOutlineComplete] = useState(false);
  const [openLive, setOpenLive] = useState(false);
  useEffect(() => {
    const stop = new AbortController();
    // One that cannot be read (damaged) is as none; with neither, the live document opens at once.
    const decode = (text: string | null) => (text === null ? null : decodeWorkspaceOutline(text));
    const none = () => null;
    void (async () => {
      const first = decode(await takeEarly(api, "getOutlineFirstScreen").catch(none));
      if (stop.signal.aborted) return;
      if (first && !early) setOutline(workspaceFromOutline(first));
      if (first) await ownerPause(WHOLE_OUTLINE_IDLE_MS, WHOLE_OUTLINE_MAX_DELAY_MS, stop.signal);
      if (stop.signal.aborted) return;
      const whole = decode(await api.getWorkspaceOutline().catch(none));
      if (stop.signal.aborted) return;
      if (whole?.complete) {
        setOutline(workspaceFromOutline(whole));
        setOutlineComplete(true);
      }
      if (first || whole?.complete) await ownerPause(LIVE_WORKSPACE_IDLE_MS, LIVE_WORKSPACE_MAX_DELAY_MS, stop.signal);
      if (!stop.signal.aborted) setOpenLive(true);
    })();
    return () => stop.abort();
  }, [api, early]);
  return { outline, outlineComplete, openLive };
}
