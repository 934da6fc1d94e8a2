import { useState } from "react";
import type * as Y from "yjs";
import { ConfirmButton } from "../components/confirm-button";
import { NameInput } from "./name-input";
import { createFolder, deleteFolder, renameFolder } from "./workspace-actions";
import { ALL_NOTES, type FolderNode, type FolderSelection, folderNameIssue, type Workspace } from "./workspace-model";

/** What the owner is typing a name for, if anything: a new folder under `parent`, or a rename. */
type Naming = { readonly kind: "create"; readonly parent: string | null } | { readonly kind: "rename"; readonly uuid: string } | null;

interface FolderTreeProps {
  /** Null while the workspace document loads (the first view): folders can be looked at, not changed. */
  readonly doc: Y.Doc | null;
  readonly workspace: Workspace;
  readonly selection: FolderSelection;
  readonly onSelect: (selection: FolderSelection) => void;
  /** Shown over the editor (no room beside it) rather than beside it. */
  readonly overlay: boolean;
  readonly width: number;
}

/**
 * "All notes" and the nested folders; create, rename and delete act on the workspace document.
 * The selected folder's actions sit above the tree, never between a folder and its children.
 */
export function FolderTree({ doc, workspace, selection, onSelect, overlay, width }: FolderTreeProps) {
  const [naming, setNaming] = useState<Naming>(null);
  const selected = selection.kind === "folder" ? selection.uuid : null;
  const selectedName = selected ? workspace.folders.get(selected)?.name : undefined;

  const newFolderInput = (parent: string | null) =>
    naming?.kind === "create" && naming.parent === parent ? (
      <li>
        <NameInput
          label="Folder name"
          placeholder={parent === null ? "New folder name" : "New subfolder name"}
          validate={(name) => folderNameIssue(workspace, name, parent)}
          onSubmit={(name) => {
            setNaming(null);
            if (doc) onSelect({ kind: "folder", uuid: createFolder(doc, name, parent) });
          }}
          onCancel={() => setNaming(null)}
        />
      </li>
    ) : null;

  const renderNode = (node: FolderNode) => {
    const meta = workspace.folders.get(node.uuid);
    return (
      <li key={node.uuid}>
        {naming?.kind === "rename" && naming.uuid === node.uuid ? (
          <NameInput
            label="Folder name"
            placeholder="Folder name"
            initial={node.name}
            validate={(name) => folderNameIssue(workspace, name, meta?.parent ?? null, node.uuid)}
            onSubmit={(name) => {
              setNaming(null);
              if (doc) renameFolder(doc, node.uuid, name);
            }}
            onCancel={() => setNaming(null)}
          />
        ) : (
          <button
            type="button"
            className="tree-item"
            style={{ paddingInlineStart: `${0.6 + node.depth * 0.9}rem` }}
            aria-current={node.uuid === selected ? "true" : undefined}
            title={node.name}
            dir="auto"
            onClick={() => onSelect({ kind: "folder", uuid: node.uuid })}
          >
            {node.name}
          </button>
        )}
        {(node.children.length > 0 || (naming?.kind === "create" && naming.parent === node.uuid)) && (
          <ul>
            {node.children.map(renderNode)}
            {newFolderInput(node.uuid)}
          </ul>
        )}
      </li>
    );
  };

  return (
    <nav className={overlay ? "folder-pane pane-overlay" : "folder-pane"} aria-label="Folders" style={{ width }}>
      <div className="pane-header">
        <h3>Folders</h3>
        <button
          type="button"
          className="icon-button"
          aria-label="New folder"
          title="New folder"
          onClick={() => setNaming({ kind: "create", parent: null })}
        >
          +
        </button>
      </div>
      {selected && selectedName !== undefined && naming === null && (
        <div className="folder-actions">
          <button type="button" onClick={() => setNaming({ kind: "create", parent: selected })}>
            New subfolder
          </button>
          <button type="button" onClick={() => setNaming({ kind: "rename", uuid: selected })}>
            Rename folder
          </button>
          <ConfirmButton
            label="Delete folder"
            question={`Move "${selectedName}" to the Trash? Its notes and subfolders move up a level.`}
            onConfirm={() => {
              if (doc) deleteFolder(doc, selected);
              onSelect(ALL_NOTES);
            }}
          />
        </div>
      )}
      <ul className="folder-tree">
        <li>
          <button
            type="button"
            className="tree-item"
            aria-current={selection.kind === "all" ? "true" : undefined}
            onClick={() => onSelect(ALL_NOTES)}
          >
            All notes
          </button>
        </li>
        {workspace.tree.map(renderNode)}
        {newFolderInput(null)}
      </ul>
      <button
        type="button"
        className="tree-item trash-item"
        aria-current={selection.kind === "trash" ? "true" : undefined}
        onClick={() => onSelect({ kind: "trash" })}
      >
        Trash{workspace.trash.length > 0 ? ` (${workspace.trash.length})` : ""}
      </button>
    </nav>
  );
}
