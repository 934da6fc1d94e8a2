/** The acceptance example: the user's profile in the agent's memory, with sections. */
export const USER_MD = [
  "# USER",
  "",
  "## Name",
  "",
  "Ada Lovelace, who writes software for a living.",
  "",
  "## Goals",
  "",
  "- Run a marathon in under four hours",
  "- Learn Rust well enough to ship a command-line tool",
  "- Read twelve books this year",
  "",
  "## Preferences",
  "",
  "- Tea over coffee",
  "- Short, direct replies",
].join("\n");
