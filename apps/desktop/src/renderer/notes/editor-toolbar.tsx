import { type Editor, useEditorState } from "@tiptap/react";

interface ToolbarButton {
  readonly label: string;
  /** Shown on the button; the label is its accessible name. */
  readonly glyph: string;
  readonly isActive: (editor: Editor) => boolean;
  readonly run: (editor: Editor) => void;
}

const BUTTONS: readonly (readonly ToolbarButton[])[] = [
  [
    { label: "Bold", glyph: "B", isActive: (e) => e.isActive("bold"), run: (e) => e.chain().focus().toggleBold().run() },
    { label: "Italic", glyph: "I", isActive: (e) => e.isActive("italic"), run: (e) => e.chain().focus().toggleItalic().run() },
    { label: "Strikethrough", glyph: "S", isActive: (e) => e.isActive("strike"), run: (e) => e.chain().focus().toggleStrike().run() },
    { label: "Inline code", glyph: "<>", isActive: (e) => e.isActive("code"), run: (e) => e.chain().focus().toggleCode().run() },
  ],
  [1, 2, 3].map((level) => ({
    label: `Heading ${level}`,
    glyph: `H${level}`,
    isActive: (e: Editor) => e.isActive("heading", { level }),
    run: (e: Editor) =>
      e
        .chain()
        .focus()
        .toggleHeading({ level: level as 1 | 2 | 3 })
        .run(),
  })),
  [
    { label: "Bullet list", glyph: "•", isActive: (e) => e.isActive("bulletList"), run: (e) => e.chain().focus().toggleBulletList().run() },
    {
      label: "Numbered list",
      glyph: "1.",
      isActive: (e) => e.isActive("orderedList"),
      run: (e) => e.chain().focus().toggleOrderedList().run(),
    },
    { label: "Task list", glyph: "☐", isActive: (e) => e.isActive("taskList"), run: (e) => e.chain().focus().toggleTaskList().run() },
    { label: "Quote", glyph: "“", isActive: (e) => e.isActive("blockquote"), run: (e) => e.chain().focus().toggleBlockquote().run() },
    { label: "Code block", glyph: "{ }", isActive: (e) => e.isActive("codeBlock"), run: (e) => e.chain().focus().toggleCodeBlock().run() },
  ],
];

/** Formatting for the note body; each button says whether its format applies at the cursor. */
export function EditorToolbar({ editor }: { editor: Editor }) {
  // Re-render on selection and content changes, but only when an active state actually flips.
  const active = useEditorState({
    editor,
    selector: ({ editor: current }) => BUTTONS.flat().map((button) => button.isActive(current)),
    equalityFn: (a, b) => b !== null && a.length === b.length && a.every((value, index) => value === b[index]),
  });
  let index = 0;
  return (
    <div className="editor-toolbar" role="toolbar" aria-label="Formatting">
      {BUTTONS.map((group) => (
        <div className="toolbar-group" key={group[0]?.label}>
          {group.map((button) => {
            const pressed = active[index++] ?? false;
            return (
              <button
                key={button.label}
                type="button"
                aria-label={button.label}
                title={button.label}
                aria-pressed={pressed}
                // Keep the editor's selection: a mouse-down on the button would otherwise blur it.
                onMouseDown={(event) => event.preventDefault()}
                onClick={() => button.run(editor)}
              >
                {button.glyph}
              </button>
            );
          })}
        </div>
      ))}
    </div>
  );
}
