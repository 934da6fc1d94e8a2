/**
 * Formatted text from untrusted sources (the agent's Markdown, messages, briefings), read into one
 * closed model and shown by the desktop (React) and the server's guest page (DOM) alike.
 */

// What a `time` inline shows, for renderers outside this folder (the desktop's RichText).
export { relativeTime } from "../relative-time";
export * from "./dom";
export * from "./markdown";
export * from "./rich-model";
