import { z } from "zod";
import { listContacts } from "../../people/network/contacts";
import { type AnyAgentTool, defineTool } from "./agent-tool";

const listNetworkTool = defineTool({
  name: "list_network",
  namespace: "network",
  source: "native",
  readWrite: "read",
  needs: "os.network:read",
  route: "networkOverview",
  description:
    "List the people the user is connected to, with which way agent requests can flow: outbound (the user's agent can reach theirs), inbound, or mutual.",
  input: z.object({}),
  async execute(_input, { app, grant }) {
    // Who the owner knows is the owner's own business: a contact's agent or a guest asking through
    // the owner's agent learns nothing of it, whatever scopes their grant carries.
    if (grant.caller.kind !== "owner" && grant.caller.kind !== "heartbeat") return { contacts: [] };
    const contacts = await listContacts(app.db, grant.ownerId, app.clock.iso());
    return { contacts: contacts.map(({ userId, name, username, direction }) => ({ userId, name, username, direction })) };
  },
});

export const NETWORK_TOOLS: readonly AnyAgentTool[] = [listNetworkTool];
