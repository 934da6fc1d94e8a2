import type { ConnectionStatusWords, ToolSourceKind } from "../../shared/desktop-api";

const SOURCE_WORDS: Record<ToolSourceKind, string> = {
  native: "built in",
  mcp: "remote tool server",
  integration: "integration",
};

/** `12 tools`, `1 tool`. */
export function toolsWord(count: number): string {
  return `${count} tool${count === 1 ? "" : "s"}`;
}

/** Where a namespace's tools come from, in words: "built in", "remote tool server". */
export function sourcesWords(sources: readonly ToolSourceKind[]): string {
  return sources.map((source) => SOURCE_WORDS[source] ?? source).join(", ");
}

/** The status as one line, for a notice after an action: "Connected", "Needs sign-in: …". */
export function stateLine(state: ConnectionStatusWords): string {
  return state.detail ? `${state.label}: ${state.detail}` : state.label;
}

/** Whether signing in is what the owner should do next. */
export function wantsSignIn(state: ConnectionStatusWords, authorized: boolean): boolean {
  return state.status === "needs_reauth" || state.status === "disconnected" || (!authorized && state.status !== "connected");
}
