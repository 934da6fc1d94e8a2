import { type ReactNode, useEffect, useRef } from "react";

/**
 * A modal `<dialog>` open while mounted: the browser traps focus in it, and Escape or a click on
 * the backdrop closes it (`onClose`), as in any desktop app's palettes and sheets.
 */
export function ModalDialog({
  label,
  className,
  onClose,
  children,
}: {
  label: string;
  className?: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    dialog.showModal();
    return () => dialog.close();
  }, []);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the click is on the backdrop; Escape is the dialog's own key for the same.
    <dialog
      ref={ref}
      aria-label={label}
      className={className ? `modal-dialog ${className}` : "modal-dialog"}
      onClose={onClose}
      onClick={(event) => {
        // A click on the backdrop lands on the dialog element itself.
        if (event.target === event.currentTarget) onClose();
      }}
    >
      {children}
    </dialog>
  );
}
