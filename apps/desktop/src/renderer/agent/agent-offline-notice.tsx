/** Said by the Agent and Today sections while the server is out of reach: the agent lives there. */
export function AgentOfflineNotice({ detail }: { detail?: string }) {
  return (
    <p className="agent-offline" role="status">
      The agent needs the server, and it's offline right now. {detail ?? "What you type stays here; send it once the server is back."}
    </p>
  );
}
