import type { KeyboardEvent, PointerEvent } from "react";
import { clampWidth, PANE_LIMITS, type ResizablePane } from "./pane-layout";

const KEY_STEP = 16;

interface PaneResizerProps {
  readonly pane: ResizablePane;
  /** Accessible name, e.g. "Resize the note list". */
  readonly label: string;
  readonly width: number;
  /** The pane lies after the separator (the snapshots panel): dragging left widens it. */
  readonly after?: boolean;
  readonly onResize: (width: number) => void;
}

/** A vertical splitter: drag it, or focus it and use the arrow keys (Home and End for the limits). */
export function PaneResizer({ pane, label, width, after = false, onResize }: PaneResizerProps) {
  const direction = after ? -1 : 1;
  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    event.preventDefault();
    const handle = event.currentTarget;
    handle.setPointerCapture(event.pointerId);
    const startX = event.clientX;
    const startWidth = width;
    const move = (moved: globalThis.PointerEvent) => onResize(clampWidth(pane, startWidth + direction * (moved.clientX - startX)));
    const stop = () => {
      handle.removeEventListener("pointermove", move);
      handle.removeEventListener("pointerup", stop);
      handle.removeEventListener("pointercancel", stop);
    };
    handle.addEventListener("pointermove", move);
    handle.addEventListener("pointerup", stop);
    handle.addEventListener("pointercancel", stop);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const next =
      event.key === "ArrowLeft"
        ? width - direction * KEY_STEP
        : event.key === "ArrowRight"
          ? width + direction * KEY_STEP
          : event.key === "Home"
            ? PANE_LIMITS[pane].min
            : event.key === "End"
              ? PANE_LIMITS[pane].max
              : null;
    if (next === null) return;
    event.preventDefault();
    onResize(clampWidth(pane, next));
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a focusable splitter is a separator with a value (WAI-ARIA window splitter); <hr> cannot take focus or keys.
    <div
      className="pane-resizer"
      role="separator"
      aria-orientation="vertical"
      aria-label={label}
      aria-valuenow={width}
      aria-valuemin={PANE_LIMITS[pane].min}
      aria-valuemax={PANE_LIMITS[pane].max}
      tabIndex={0}
      onPointerDown={onPointerDown}
      onKeyDown={onKeyDown}
    />
  );
}
