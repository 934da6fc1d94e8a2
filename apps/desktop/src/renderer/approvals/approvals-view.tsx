import type { AgentAccessChoice, DesktopApi, GrantItem } from "../../shared/desktop-api";
import { ErrorNotice } from "../components/error-notice";
import { useAction } from "../components/use-action";
import { usePolled } from "../components/use-polled";
import { AccessRequestCard } from "./access-request-card";
import { type GrantButton, GrantRow } from "./grant-row";
import { RESOLUTIONS, ToolCallCard, type ToolCallDecision } from "./tool-call-card";
import { useNow } from "./use-now";
import "./approvals.css";

/** Pending tool calls expire in 5 minutes; a second's delay is what the owner can notice. */
const APPROVALS_POLL_MS = 1000;
/** Grant requests wait 10 minutes; they need not be as prompt. */
const GRANTS_POLL_MS = 2000;
const DECISIONS = Object.keys(RESOLUTIONS) as ToolCallDecision[];

/**
 * What needs the owner: tool calls the runtime wants while serving someone's grant, requests for
 * grants, and the grants in force. Decisions go to the server through the host; the lists are
 * the server's, so they survive restarts and match the tray.
 */
export function ApprovalsView({ api }: { api: DesktopApi }) {
  const approvals = usePolled(() => api.listApprovals(), APPROVALS_POLL_MS);
  const grants = usePolled(() => api.listGrants(), GRANTS_POLL_MS);
  const accessRequests = usePolled(() => api.listAccessRequests(), GRANTS_POLL_MS);
  const now = useNow();
  const action = useAction(() => {
    approvals.refresh();
    grants.refresh();
    accessRequests.refresh();
  });

  /** A grant button whose action key names the verb and the grant, so only it shows as busy. */
  const grantButton = (label: string, grant: GrantItem, send: (input: { grantId: string }) => Promise<void>): GrantButton => {
    const key = `${label}:${grant.grantId}`;
    return { label, key, onClick: () => void action.run(key, () => send({ grantId: grant.grantId })) };
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
