import { useEffect, useState } from "react";
import type { DesktopApi } from "../../shared/desktop-api";
import { type Workspace, workspaceFromOutline } from "./workspace-model";

/**
 * How long after the first view the live workspace document is opened. Loading it takes the host a
 * while with tens of thousands of notes (one Yjs document, an entry per note), and the host also
 * serves the note the owner opens first: that goes first.
 */
export const LIVE_WORKSPACE_DELAY_MS = 1_000;

export interface FirstView {
  /** The outline saved on this machine, as the notes view reads a workspace; null: none (or not read yet). */
  readonly outline: Workspace | null;
  /** Whether to open the live workspace document now. */
  readonly openLive: boolean;
}

/**
 * The notes view's first view: the workspace's outline (`getWorkspaceOutline`), shown at once, and
 * when to open the live document, which replaces it. Without an outline the document opens at once.
 */
export function useFirstView(api: DesktopApi): FirstView {
  const [outline, setOutline] = useState<Workspace | null | undefined>(undefined);
  const [openLive, setOpenLive] = useState(false);
  useEffect(() => {
    let cancelled = false;
    api.getWorkspaceOutline().then(
      (saved) => {
        if (!cancelled) setOutline(saved ? workspaceFromOutline(saved) : null);
      },
      // Only a quicker first view is lost: the live document comes as it always did.
      () => {
        if (!cancelled) setOutline(null);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [api]);
  useEffect(() => {
    if (outline === undefined) return;
    if (outline === null) return setOpenLive(true);
    const timer = setTimeout(() => setOpenLive(true), LIVE_WORKSPACE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [outline]);
  return { outline: outline ?? null, openLive };
}
