import { useState } from "react";
import type { AgentAccessChoice, DesktopApi, GrantItem } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { AccessRequestCard } from "./access-request-card";
import { EscalationCard, type EscalationDecision } from "./escalation-card";
import { type GrantButton, GrantRow } from "./grant-row";
import { RESOLUTIONS, ToolCallCard, type ToolCallDecision } from "./tool-call-card";
import { useNow } from "./use-now";
import "./approvals.css";

/** Pending tool calls expire in 5 minutes; a second's delay is what the owner can notice. */
const APPROVALS_POLL_MS = 1000;
/** Grant requests wait 10 minutes; they need not be as prompt. */
const GRANTS_POLL_MS = 2000;
const DECISIONS = Object.keys(RESOLUTIONS) as ToolCallDecision[];
/** Agents' paused actions live a day; the host hears of new ones at once, so this poll only reads what it knows. */
const ESCALATIONS_POLL_MS = 1000;

const ESCALATION_DONE: Record<EscalationDecision, string> = {
  continue: "Continued: the call runs once and the run goes on.",
  stop: "Stopped: the agent is told you stopped it.",
};

/**
 * What needs the owner: agents' actions paused for Continue / Stop (escalations: heartbeat, managed
 * agents, agent RPC), tool calls the runtime wants while serving someone's grant, requests for
 * grants, and the grants in force. Decisions go to the server through the host; the lists are
 * the server's, so they survive restarts and match the tray.
 */
export function ApprovalsView({ api }: { api: DesktopApi }) {
  const approvals = usePolled(() => api.listApprovals(), APPROVALS_POLL_MS);
  const escalations = usePolled(() => api.listEscalations(), ESCALATIONS_POLL_MS);
  const [done, setDone] = useState<string | null>(null);
  const grants = usePolled(() => api.listGrants(), GRANTS_POLL_MS);
  const accessRequests = usePolled(() => api.listAccessRequests(), GRANTS_POLL_MS);
  const now = useNow();
  const action = useAction(() => {
    approvals.refresh();
    escalations.refresh();
    grants.refresh();
    accessRequests.refresh();
  });

  /** A grant button whose action key names the verb and the grant, so only it shows as busy. */
  const grantButton = (label: string, grant: GrantItem, send: (input: { grantId: string }) => Promise<void>): GrantButton => {
    const key = `${label}:${grant.grantId}`;
    return { label, key, onClick: () => void action.run(key, () => send({ grantId: grant.grantId })) };
  };
  const decideEscalation = (id: string, decision: EscalationDecision) => {
    setDone(null);
    void action.run(`${decision}:${id}`, async () => {
      await api.resolveEscalation({ id, decision });
      setDone(ESCALATION_DONE[decision]);
    });
  };
  const decide = (approvalId: string, decision: ToolCallDecision) =>
    action.run(`${decision}:${approvalId}`, () => api.resolveApproval({ approvalId, ...RESOLUTIONS[decision] }));
  const answerAccess = (requestId: number, answer: "accept" | "decline", access: AgentAccessChoice) =>
    action.run(`${answer}:access:${requestId}`, () => api.answerAccessRequest({ requestId, action: answer, access }));
  const requests = (grants.data ?? []).filter((grant) => grant.direction === "incoming" && grant.status === "pending");
  const active = (grants.data ?? []).filter((grant) => grant.status === "active");

  return (
    <div className="approvals-view">
      {action.error && <ErrorNotice message={action.error} />}
      {done && !action.error && (
        <p className="approvals-done" role="status">
          {done}
        </p>
      )}

      <section aria-labelledby="agent-actions-heading">
        <h3 id="agent-actions-heading">Agent actions</h3>
        <LoadState loaded={escalations.data !== undefined} error={escalations.error} />
        {escalations.data && (!escalations.data.supported || escalations.data.notAllowed) ? (
          <p className="empty-state">{escalations.data.notAllowed ?? "This server doesn't pause agents' actions for approval yet."}</p>
        ) : (
          escalations.data?.escalations.length === 0 && <p className="empty-state">No agent is waiting for your decision.</p>
        )}
        <div className="approval-list">
          {escalations.data?.escalations.map((escalation) => (
            <EscalationCard
              key={escalation.id}
              escalation={escalation}
              now={now}
              sending={(["continue", "stop"] as const).find((decision) => action.running === `${decision}:${escalation.id}`) ?? null}
              busy={action.running !== null}
              onDecide={(decision) => decideEscalation(escalation.id, decision)}
            />
          ))}
        </div>
      </section>

      <section aria-labelledby="tool-calls-heading">
        <h3 id="tool-calls-heading">Tool calls</h3>
        <LoadState loaded={approvals.data !== undefined} error={approvals.error} />
        {approvals.data?.length === 0 && <p className="empty-state">No tool calls are waiting for your decision.</p>}
        <div className="approval-list">
          {approvals.data?.map((approval) => {
            const sending = DECISIONS.find((decision) => action.running === `${decision}:${approval.approvalId}`) ?? null;
            return (
              <ToolCallCard
                key={approval.approvalId}
                approval={approval}
                now={now}
                sending={sending}
                busy={action.running !== null}
                onDecide={(decision) => void decide(approval.approvalId, decision)}
              />
            );
          })}
        </div>
      </section>

      <section aria-labelledby="access-requests-heading">
        <h3 id="access-requests-heading">Agent access requests</h3>
        <LoadState loaded={accessRequests.data !== undefined} error={accessRequests.error} />
        {accessRequests.data?.length === 0 && <p className="empty-state">Nobody is asking for agent access.</p>}
        <ul className="grant-list">
          {accessRequests.data?.map((request) => (
            <AccessRequestCard
              key={request.requestId}
              request={request}
              busy={action.running !== null}
              running={action.running}
              onAnswer={(answer, access) => void answerAccess(request.requestId, answer, access)}
            />
          ))}
        </ul>
      </section>

      <section aria-labelledby="grant-requests-heading">
        <h3 id="grant-requests-heading">Grant requests</h3>
        <LoadState loaded={grants.data !== undefined} error={grants.error} />
        {grants.data && requests.length === 0 && <p className="empty-state">Nobody is asking to reach your agent.</p>}
        <GrantList
          grants={requests}
          running={action.running}
          buttonsFor={(grant) => [
            grantButton("Accept", grant, (input) => api.acceptGrant(input)),
            grantButton("Decline", grant, (input) => api.declineGrant(input)),
          ]}
        />
      </section>

      <section aria-labelledby="active-grants-heading">
        <h3 id="active-grants-heading">Active grants</h3>
        {grants.data && active.length === 0 && <p className="empty-state">No grants are active.</p>}
        <GrantList
          grants={active}
          running={action.running}
          buttonsFor={(grant) => [grantButton("Revoke", grant, (input) => api.revokeGrant(input))]}
        />
      </section>
    </div>
  );
}

function GrantList({
  grants,
  running,
  buttonsFor,
}: {
  grants: readonly GrantItem[];
  running: string | null;
  buttonsFor(grant: GrantItem): GrantButton[];
}) {
  if (grants.length === 0) return null;
  return (
    <ul className="grant-list">
      {grants.map((grant) => (
        <GrantRow key={grant.grantId} grant={grant} buttons={buttonsFor(grant)} running={running} />
      ))}
    </ul>
  );
}

/** Loading and load failures, said quietly: the lists keep their last answer meanwhile. */
function LoadState({ loaded, error }: { loaded: boolean; error: string | null }) {
  if (error) return <p className="approvals-load-error">Could not refresh: {error}</p>;
  if (!loaded) return <p className="empty-state">Loading…</p>;
  return null;
}
