// Which agent an A2A handle names, and whether a caller may ask it: person agents
// (`<username>_coo`) and managed agents (`<handle>`), one resolver each.

import type { UserPrincipal } from "../../auth/principal";
import type { AppContext } from "../../context";
import { displayName, findPerson } from "../../people/messaging/shared-conversations";
import type { PersonRow } from "../../people/network/network-people";
import { usableContactPermission } from "../../people/share/link-bound";
import { mayAskManagedAgent } from "../managed-agents/managed-agent-message";
import { type AgentRow, agentByHandle } from "../managed-agents/managed-agent-store";

/** An agent reachable over A2A: what its card says, and whose it is. */
export interface A2AAgent {
  /** What `POST /agent/message {to}` takes for it, and the last segment of its A2A URL. */
  readonly handle: string;
  readonly name: string;
  readonly description: string;
  readonly ownerId: number;
}

/**
 * Turns handles into agents. Each kind of agent (people's, later managed ones) is one resolver;
 * the A2A routes ask them in order, so a new kind is a new resolver, nothing else.
 */
export interface AgentResolver {
  /** The agent `handle` names, or null when this resolver does not know it. */
  resolve(handle: string): Promise<A2AAgent | null>;
  /** Whether `caller` holds a grant that lets it ask `agent` (no grant: nothing may run). */
  mayAsk(agent: A2AAgent, caller: UserPrincipal): Promise<boolean>;
  /** The agents `caller` may ask, for `GET /a2a`. */
  reachable(caller: UserPrincipal): Promise<A2AAgent[]>;
}

const PERSON_AGENT = /^([a-z0-9][a-z0-9_.-]{0,63})_coo$/;

function personAgent(person: PersonRow): A2AAgent {
  const owner = displayName(person);
  return {
    handle: `${person.username}_coo`,
    name: `${owner}'s agent`,
    description: `${owner}'s Tandem agent. It answers within what ${owner} has granted you: the folders, todos and tools of your permission, nothing more.`,
    ownerId: person.id,
  };
}

/** A person's agent, `<username>_coo`: asked under the permission its owner gave the caller. */
export function personAgents(app: AppContext): AgentResolver {
  return {
    async resolve(handle) {
      const match = PERSON_AGENT.exec(handle.toLowerCase());
      const person = match?.[1] && !/^[0-9]+$/.test(match[1]) ? await findPerson(app.db, match[1]) : undefined;
      return person ? personAgent(person) : null;
    },
    async mayAsk(agent, caller) {
      return agent.ownerId !== caller.userId && (await usableContactPermission(app, agent.ownerId, caller.userId)) !== null;
    },
    async reachable(caller) {
      const rows = await app.db
        .selectFrom("contact_permissions")
        .innerJoin("users", "users.id", "contact_permissions.grantor_id")
        .select(["users.id", "users.username", "users.name"])
        .where("contact_permissions.grantee_id", "=", caller.userId)
        .orderBy("users.username")
        .execute();
      const agents: A2AAgent[] = [];
      for (const row of rows) {
        const agent = personAgent({ id: Number(row.id), username: row.username, name: row.name });
        // A permission born of a share link counts only while the link is live.
        if (await this.mayAsk(agent, caller)) agents.push(agent);
      }
      return agents;
    },
  };
}

function managedAgent(row: AgentRow): A2AAgent {
  return {
    handle: row.handle,
    name: row.name,
    description:
      row.description || `A Tandem managed agent. It answers within what its owner configured for it and granted you: nothing more.`,
    ownerId: Number(row.owner_id),
  };
}

/**
 * Managed agents, by handle: asked under the agent's grant intersected with what its owner
 * granted the caller (its owner asks it under its grant alone). A paused one answers 409.
 */
export function managedAgents(app: AppContext): AgentResolver {
  return {
    async resolve(handle) {
      const row = await agentByHandle(app.db, handle.toLowerCase());
      return row ? managedAgent(row) : null;
    },
    async mayAsk(agent, caller) {
      const row = await agentByHandle(app.db, agent.handle);
      return row !== undefined && (await mayAskManagedAgent(app, row, caller.userId)) !== null;
    },
    async reachable(caller) {
      const owners = await app.db.selectFrom("contact_permissions").select("grantor_id").where("grantee_id", "=", caller.userId).execute();
      const ownerIds = [caller.userId, ...owners.map((row) => Number(row.grantor_id))];
      const rows = await app.db
        .selectFrom("managed_agents")
        .selectAll()
        .where("owner_id", "in", ownerIds)
        .where("status", "=", "active")
        .orderBy("handle")
        .execute();
      const agents: A2AAgent[] = [];
      for (const row of rows) {
        // A permission born of a share link counts only while the link is live.
        if ((await mayAskManagedAgent(app, row, caller.userId)) !== null) agents.push(managedAgent(row));
      }
      return agents;
    },
  };
}
