import { useCallback, useEffect, useState } from "react";

/** How long the Undo toast stays. */
export const UNDO_TOAST_MS = 8000;

export interface Undoable {
  readonly message: string;
  readonly undo: () => void;
}

/** The last undoable change ("Completed “X”", "Deleted “X”") and its Undo, until the next one or a timeout. */
export function useUndoToast(): { toast: Undoable | null; offer: (message: string, undo: () => void) => void; dismiss: () => void } {
  const [toast, setToast] = useState<Undoable | null>(null);
  useEffect(() => {
    if (!toast) return;
    const timer = setTimeout(() => setToast(null), UNDO_TOAST_MS);
    return () => clearTimeout(timer);
  }, [toast]);
  const offer = useCallback((message: string, undo: () => void) => setToast({ message, undo }), []);
  const dismiss = useCallback(() => setToast(null), []);
  return { toast, offer, dismiss };
}

/** Always rendered: a live region must exist before its text changes to be announced. */
export function UndoToast({ toast, onDismiss }: { toast: Undoable | null; onDismiss: () => void }) {
  return (
    <div className="undo-toast" role="status" data-open={toast !== null}>
      {toast && (
        <>
          <span>{toast.message}</span>
          <button
            type="button"
            onClick={() => {
              toast.undo();
              onDismiss();
            }}
          >
            Undo
          </button>
        </>
      )}
    </div>
  );
}
