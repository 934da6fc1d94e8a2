export { htmlToJson, jsonToHtml } from "./html";
export { jsonToMarkdown, markdownToJson } from "./markdown";
export { normalizeJson } from "./normalize";
export { isAllowedHref, noteExtensions, noteSchema } from "./schema";
export { countWords, jsonHeadings, jsonToText, textToJson } from "./text";
export { isBlockHtml, updateContentToJson } from "./update-content";
export { applyStoredState, MAX_TYPE_DEPTH, NOTE_FRAGMENT, readNoteBody, writeNoteBody } from "./yjs";
