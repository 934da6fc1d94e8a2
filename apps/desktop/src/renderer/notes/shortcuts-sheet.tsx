import { ModalDialog } from "../components/modal-dialog";
import { SECTION_SHORTCUT } from "../layout/sections";
import { IN_PLACE_KEYS, keyLabel, SHORTCUTS } from "./shortcuts";

/** Every keyboard shortcut of the notes view (and the app's section keys), from the tables the key handlers read. */
export function ShortcutsSheet({ onClose }: { onClose: () => void }) {
  const rows = [
    ...SHORTCUTS.map((shortcut) => ({ label: keyLabel(shortcut.label), what: shortcut.what })),
    { label: keyLabel(SECTION_SHORTCUT.label), what: SECTION_SHORTCUT.what },
    ...IN_PLACE_KEYS.map((key) => ({ label: keyLabel(key.label), what: key.what })),
  ];
  return (
    <ModalDialog label="Keyboard shortcuts" className="shortcuts-sheet" onClose={onClose}>
      <div className="pane-header">
        <h3>Keyboard shortcuts</h3>
        <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>
          ×
        </button>
      </div>
      <table>
        <tbody>
          {rows.map((row) => (
            <tr key={row.label}>
              <th scope="row">
                <kbd>{row.label}</kbd>
              </th>
              <td>{row.what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ModalDialog>
  );
}
