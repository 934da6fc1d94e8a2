/**
 * How the notes view shares its width: folders | note list | editor | snapshots. The editor never
 * gets narrower than a readable column; when the panes the owner asked for do not fit beside it,
 * the folders give way first, then the note list (each can still be opened over the editor), and
 * the snapshots panel narrows down to its minimum.
 */

/** About 30 characters of body text per line: below this an editor stops being readable. */
export const EDITOR_MIN = 420;

export const PANE_LIMITS = {
  folders: { min: 150, max: 360, initial: 200 },
  list: { min: 200, max: 480, initial: 260 },
  snapshots: { min: 220, max: 480, initial: 280 },
} as const;

export type ResizablePane = keyof typeof PANE_LIMITS;

export interface PanePreferences {
  readonly foldersOpen: boolean;
  readonly listOpen: boolean;
  readonly widths: Readonly<Record<ResizablePane, number>>;
}

export interface PaneLayout {
  /** Width of each pane shown beside the editor; 0 when it is collapsed. */
  readonly folders: number;
  readonly list: number;
  readonly snapshots: number;
}

const clamp = (value: number, min: number, max: number) => Math.max(min, Math.min(max, value));

export function clampWidth(pane: ResizablePane, width: number): number {
  return clamp(Math.round(width), PANE_LIMITS[pane].min, PANE_LIMITS[pane].max);
}

/** The panes that fit beside a readable editor in `width` pixels. */
export function layoutPanes(width: number, preferences: PanePreferences, snapshotsOpen: boolean): PaneLayout {
  const { widths } = preferences;
  const snapshots = snapshotsOpen
    ? clamp(widths.snapshots, PANE_LIMITS.snapshots.min, Math.max(PANE_LIMITS.snapshots.min, width - EDITOR_MIN))
    : 0;
  let room = width - EDITOR_MIN - snapshots;
  const list = preferences.listOpen && room >= PANE_LIMITS.list.min ? Math.min(widths.list, room) : 0;
  room -= list;
  const folders = preferences.foldersOpen && room >= PANE_LIMITS.folders.min ? Math.min(widths.folders, room) : 0;
  return { folders, list, snapshots };
}

const STORAGE_KEY = "tandem.notes.panes";

export const DEFAULT_PREFERENCES: PanePreferences = {
  foldersOpen: true,
  listOpen: true,
  widths: { folders: PANE_LIMITS.folders.initial, list: PANE_LIMITS.list.initial, snapshots: PANE_LIMITS.snapshots.initial },
};

/** The owner's last layout on this machine (what they opened, how wide), or the defaults. */
export function loadPreferences(): PanePreferences {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? "null") as Partial<PanePreferences> | null;
    if (!saved || typeof saved !== "object") return DEFAULT_PREFERENCES;
    const widths = { ...DEFAULT_PREFERENCES.widths };
    for (const pane of Object.keys(PANE_LIMITS) as ResizablePane[]) {
      const value = saved.widths?.[pane];
      if (typeof value === "number" && Number.isFinite(value)) widths[pane] = clampWidth(pane, value);
    }
    return { foldersOpen: saved.foldersOpen !== false, listOpen: saved.listOpen !== false, widths };
  } catch {
    return DEFAULT_PREFERENCES;
  }
}

export function savePreferences(preferences: PanePreferences): void {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(preferences));
  } catch {
    // Storage full or disabled: the layout still works, it is just not remembered.
  }
}
