/**
 * Formatted text from untrusted sources (the agent's Markdown, messages, briefings), read into one
 * closed model and shown by the desktop (React) and the server's guest page (DOM) alike.
 */
export * from "./dom";
export * from "./markdown";
export * from "./rich-model";
