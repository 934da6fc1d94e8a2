/** What the owner reads when the agent's server cannot be reached: the agent runs there, not on this computer. */
export const AGENT_OFFLINE = "Can't reach the server right now. The agent runs on the server; try again once you are back online.";
