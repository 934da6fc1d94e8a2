import { type Block, type Inline, relativeTime } from "@tandem/core/rich-text";
import type { ReactNode } from "react";
import { fullTime } from "../notes/note-time";
import "./rich-text.css";

interface RichTextProps {
  readonly blocks: readonly Block[];
  /** Headings start at this level on the page (a `#` in a message is not the page's title). */
  readonly headingLevel?: 3 | 4 | 5;
  /** Opens a link outside the app (the window itself never navigates away). */
  readonly onOpenLink: (href: string) => void;
  readonly className?: string;
}

/** Formatted text from an untrusted source, as React elements: no HTML is ever handed to the page. */
export function RichText({ blocks, headingLevel = 4, onOpenLink, className }: RichTextProps) {
  const context = { headingLevel, onOpenLink };
  return (
    <div className={className ? `rich-text ${className}` : "rich-text"} dir="auto">
      {blocks.map((block, index) => renderBlock(block, index, context))}
    </div>
  );
}

interface Context {
  readonly headingLevel: number;
  readonly onOpenLink: (href: string) => void;
}

function renderBlocks(blocks: readonly Block[], context: Context): ReactNode {
  // A list item that is one paragraph reads as a line, without a paragraph's margins.
  const only = blocks.length === 1 ? blocks[0] : undefined;
  if (only?.kind === "paragraph") return renderInlines(only.children, context);
  return blocks.map((block, index) => renderBlock(block, index, context));
}

function renderBlock(block: Block, key: number, context: Context): ReactNode {
  switch (block.kind) {
    case "paragraph":
      return <p key={key}>{renderInlines(block.children, context)}</p>;
    case "heading": {
      const level = Math.min(6, context.headingLevel + block.level - 1);
      const Heading = `h${level}` as "h4";
      return <Heading key={key}>{renderInlines(block.children, context)}</Heading>;
    }
    case "list": {
      const items = block.items.map((item, index) => <li key={index}>{renderBlocks(item, context)}</li>);
      return block.ordered ? (
        <ol key={key} start={block.start}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
    case "quote":
      return <blockquote key={key}>{block.children.map((child, index) => renderBlock(child, index, context))}</blockquote>;
    case "code":
      return (
        <pre key={key}>
          <code>{block.text}</code>
        </pre>
      );
    case "table":
      return (
        <div key={key} className="rich-table">
          <table>
            {block.header.length > 0 && (
              <thead>
                <tr>
                  {block.header.map((cell, index) => (
                    <th key={index}>{renderInlines(cell, context)}</th>
                  ))}
                </tr>
              </thead>
            )}
            <tbody>
              {block.rows.map((row, rowIndex) => (
                <tr key={rowIndex}>
                  {row.map((cell, index) => (
                    <td key={index}>{renderInlines(cell, context)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    case "rule":
      return <hr key={key} />;
  }
}

function renderInlines(inlines: readonly Inline[], context: Context): ReactNode {
  return inlines.map((inline, index) => renderInline(inline, index, context));
}

function renderInline(inline: Inline, key: number, context: Context): ReactNode {
  switch (inline.kind) {
    case "text":
      return inline.text;
    case "break":
      return <br key={key} />;
    case "code":
      return <code key={key}>{inline.text}</code>;
    case "time":
      // Said relative to now, each time it is shown; the full date and time on hover.
      return (
        <time key={key} dateTime={inline.datetime} title={fullTime(inline.datetime)}>
          {relativeTime(inline.datetime)}
        </time>
      );
    case "strong":
      return <strong key={key}>{renderInlines(inline.children, context)}</strong>;
    case "em":
      return <em key={key}>{renderInlines(inline.children, context)}</em>;
    case "u":
      return <u key={key}>{renderInlines(inline.children, context)}</u>;
    case "del":
      return <del key={key}>{renderInlines(inline.children, context)}</del>;
    case "link":
      return (
        <a
          key={key}
          href={inline.href}
          title={inline.href}
          rel="noopener noreferrer"
          onClick={(event) => {
            event.preventDefault();
            context.onOpenLink(inline.href);
          }}
        >
          {renderInlines(inline.children, context)}
        </a>
      );
  }
}
