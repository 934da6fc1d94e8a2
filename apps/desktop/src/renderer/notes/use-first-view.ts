import { useEffect, useState } from "react";
import type { DesktopApi, WorkspaceOutline } from "../../shared/desktop-api";
import { type Workspace, workspaceFromOutline } from "./workspace-model";

/**
 * When the live workspace document is opened after the first view: once the owner has left the page
 * alone this long, and at the latest {@link LIVE_WORKSPACE_MAX_DELAY_MS} after it. With tens of
 * thousands of notes loading it takes a while on both sides of the local hub (one Yjs document with
 * an entry per note), and what the owner asked for first (the note they clicked) goes first.
 */
export const LIVE_WORKSPACE_IDLE_MS = 1_000;
export const LIVE_WORKSPACE_MAX_DELAY_MS = 5_000;
const INPUT_EVENTS = ["pointerdown", "keydown", "wheel"] as const;

let prefetched: { readonly api: DesktopApi; readonly outline: Promise<WorkspaceOutline | null> } | undefined;

/**
 * Asks the host for the outline as the page starts, while the app's frame is still finding out who is
 * signed in: the notes view, rendered later, takes this answer (once) instead of asking then.
 */
export function prefetchWorkspaceOutline(api: DesktopApi): void {
  prefetched = { api, outline: api.getWorkspaceOutline().catch(() => null) };
}

function workspaceOutline(api: DesktopApi): Promise<WorkspaceOutline | null> {
  const early = prefetched;
  prefetched = undefined;
  return early?.api === api ? early.outline : api.getWorkspaceOutline();
}

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
    workspaceOutline(api).then(
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
    const open = () => setOpenLive(true);
    let idle = setTimeout(open, LIVE_WORKSPACE_IDLE_MS);
    const latest = setTimeout(open, LIVE_WORKSPACE_MAX_DELAY_MS);
    const onInput = () => {
      clearTimeout(idle);
      idle = setTimeout(open, LIVE_WORKSPACE_IDLE_MS);
    };
    for (const type of INPUT_EVENTS) window.addEventListener(type, onInput, { capture: true, passive: true });
    return () => {
      clearTimeout(idle);
      clearTimeout(latest);
      for (const type of INPUT_EVENTS) window.removeEventListener(type, onInput, { capture: true });
    };
  }, [outline]);
  return { outline: outline ?? null, openLive };
}
