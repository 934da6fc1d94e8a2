/**
 * A note using every part of the schema, written the way jsonToMarkdown writes it, so a Markdown
 * round trip must reproduce it character for character. Shared by the content tests.
 */
export const SAMPLE_MARKDOWN = `# Heading one

## Heading two

###### Heading six

Some *italic*, **bold**, ~~struck~~, \`code\`, <u>underlined</u> and ***bold italic*** text with a [link](https://example.com/path?q=1 "Title") and a [mail](mailto:someone@example.com).  
After a hard break.

- bullet one
- bullet two
  - nested bullet

1. first
2. second
   1. nested ordered
3. third

- [ ] open task
- [x] done task
  - [ ] nested task

> A quote
>
> with two paragraphs

\`\`\`ts
const answer = 42;
\`\`\`

---

Emoji 😀👍🏽 and CJK 中文 日本語 한국어`;

/** `levels` bullet lists, each nested in the item of the one before, in Markdown. */
export function nestedMarkdownList(levels: number, marker = "-"): string {
  return Array.from({ length: levels }, (_, i) => `${"  ".repeat(i)}${marker} level ${i}`).join("\n");
}

/** The deepest nesting in a JSON document, counting the root as 0, found without recursion. */
export function depthOf(json: { content?: unknown[] }): number {
  let deepest = 0;
  const stack: [{ content?: unknown[] }, number][] = [[json, 0]];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [node, depth] = entry;
    deepest = Math.max(deepest, depth);
    for (const child of node.content ?? []) stack.push([child as { content?: unknown[] }, depth + 1]);
  }
  return deepest;
}
