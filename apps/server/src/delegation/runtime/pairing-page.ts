import { randomBytes } from "node:crypto";
import { escapeHtml } from "../../http/escape-html";
import { htmlPageHeaders } from "../../http/html-page-headers";
import type { PairingSummary } from "./pairing-service";

/**
 * The page a pairing's `approvalUrl` opens. Everything it shows about the device came from an
 * unauthenticated request, so every value is escaped; the owner's API key lives only in the
 * page's memory and goes only to the approve route of this same server. The script runs under
 * a per-response nonce: no other script, style, frame or form target is allowed.
 */

export function newNonce(): string {
  return randomBytes(18).toString("base64");
}

export function pairingPageHeaders(nonce: string, signedIn = false): Record<string, string> {
  const headers = htmlPageHeaders([`script-src 'nonce-${nonce}'`, `style-src 'nonce-${nonce}'`, "connect-src 'self'"]);
  // A signed-in browser decides with a form posted to this server (the session's CSRF token in it).
  if (signedIn)
    headers["content-security-policy"] = (headers["content-security-policy"] as string).replace("form-action 'none'", "form-action 'self'");
  return headers;
}

/** Where a signed-in browser posts its decision (served beside the sign-in pages). */
export const SESSION_DECISION_PATH = "/device-approval";

/** The browser's Tandem session, when it is signed in: the page then needs no API key. */
export interface PairingPageSession {
  readonly username: string;
  readonly csrf: string;
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.4rem}dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{color:#666}dd{margin:0;word-break:break-all}
.code{font:600 1.6rem ui-monospace,monospace;letter-spacing:.1em}.warn{background:#fff4e5;padding:.6rem .8rem;border-radius:6px}
input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}button{font:inherit;padding:.5rem 1.2rem;margin:.8rem .6rem 0 0;cursor:pointer}
#result{margin-top:1rem;font-weight:600}.ok{color:#1a7f37}.error{color:#c62828}`;

/** Runs in the page: sends the owner's decision with the key typed into the page, then forgets the key. */
const SCRIPT = `(() => {
  const root = document.getElementById("pairing");
  const key = document.getElementById("api-key");
  const result = document.getElementById("result");
  const buttons = [...document.querySelectorAll("button[data-action]")];
  const show = (text, kind) => { result.textContent = text; result.className = kind; };
  async function decide(action) {
    const token = key.value.trim();
    if (!token) { show("Enter your API key first.", "error"); key.focus(); return; }
    for (const b of buttons) b.disabled = true;
    try {
      const response = await fetch("device-code/approve", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer " + token },
        body: JSON.stringify({ userCode: root.dataset.code, action }),
        credentials: "omit",
        cache: "no-store",
      });
      const body = await response.json().catch(() => ({}));
      if (response.ok) {
        key.value = "";
        document.getElementById("form").hidden = true;
        show(body.status === "approved" ? "Approved. The device finishes pairing within a few seconds." : "Denied. The device will not be paired.", "ok");
        return;
      }
      show(body.message || "The server answered " + response.status + ".", "error");
    } catch {
      show("Could not reach the server.", "error");
    }
    for (const b of buttons) b.disabled = false;
  }
  for (const b of buttons) b.addEventListener("click", () => decide(b.dataset.action));
})();`;

const STATE_TEXT: Record<Exclude<PairingSummary["state"], "pending">, string> = {
  approved: "This pairing has been approved; the device is finishing it.",
  consumed: "This pairing is complete: the device is paired.",
  denied: "This pairing was denied.",
  expired: "This pairing code has expired. Start pairing again on the device.",
};

function page(nonce: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Pair a device — Tandem</title><style nonce="${nonce}">${STYLE}</style></head>
<body>${body}</body></html>`;
}

/** "3 minutes ago" for the page; the exact time sits beside it. */
function ago(iso: string, nowMs: number): string {
  const minutes = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 60_000));
  return minutes === 0 ? "just now" : `${minutes} minute${minutes === 1 ? "" : "s"} ago`;
}

/** What approving gives away, in plain words, by purpose. */
const PURPOSE_TEXT = {
  sign_in:
    "Approving signs that app in as you. It will be able to read and change your notes, todos and snapshots, create and run your managed agents (within what you grant each), and answer grant and tool-approval requests for your local agents. It will not be able to change your contacts or who may reach your agent, and it gets no access to your memory or heartbeat.",
  bridge:
    "Approving connects that device to your account as a local agent bridge for its runtime. It will receive the tasks that people you gave agent access send to your agent, and ask you before each tool call. It gets no access to your notes or todos. It is a new connection: any earlier device with the same name is disconnected and its grants end.",
} as const;

export function renderPairingPage(
  pairing: PairingSummary | null,
  nonce: string,
  nowMs: number,
  session: PairingPageSession | null = null,
): { status: number; html: string } {
  if (!pairing || pairing.state === "expired") {
    const text = pairing ? STATE_TEXT.expired : "This pairing code is unknown or has expired. Start pairing again on the device.";
    return { status: 404, html: page(nonce, `<h1>Pair a device</h1><p>${escapeHtml(text)}</p>`) };
  }
  const signIn = pairing.purpose === "sign_in";
  const from = pairing.requesterAddress ?? "an address the server did not record";
  const details = `<p class="code">${escapeHtml(pairing.userCode)}</p>
<dl><dt>Purpose</dt><dd>${signIn ? "Sign an app in to your account" : `Connect a local agent bridge (${escapeHtml(pairing.runtime)})`}</dd>
<dt>Device</dt><dd>${escapeHtml(pairing.label ?? pairing.deviceId)}${pairing.label ? ` (${escapeHtml(pairing.deviceId)})` : ""}</dd>
<dt>Requested from</dt><dd>${escapeHtml(from)}</dd>
<dt>Program</dt><dd>${escapeHtml(pairing.requesterAgent ?? "—")}</dd>
<dt>Bridge</dt><dd>${escapeHtml(pairing.bridgeVersion ?? "—")}</dd>
<dt>Requested</dt><dd>${escapeHtml(ago(pairing.createdAt, nowMs))} (${escapeHtml(pairing.createdAt)})</dd>
<dt>Expires</dt><dd>${escapeHtml(pairing.expiresAt)}</dd></dl>`;
  if (pairing.state !== "pending") {
    return { status: 200, html: page(nonce, `<h1>Pair a device</h1>${details}<p>${escapeHtml(STATE_TEXT[pairing.state])}</p>`) };
  }
  const intro = signIn
    ? `A program at ${from} asks to sign in to Tandem as you. Check that the code below is the one your own app shows.`
    : `A device at ${from} asks to connect to your account as a local agent bridge. Check that the code below is the one your own device shows.`;
  const warning = `Approve only if you started this yourself, just now, on a device you recognise above. If someone sent you this link or code, deny it. ${PURPOSE_TEXT[pairing.purpose]}`;
  const body = `<main id="pairing" data-code="${escapeHtml(pairing.userCode)}">
<h1>${signIn ? "Sign an app in" : "Connect a device"}</h1>
<p>${escapeHtml(intro)}</p>
${details}
<p class="warn">${escapeHtml(warning)}</p>
${
  session
    ? `<form method="post" action="${SESSION_DECISION_PATH}"><p>Signed in as <strong>${escapeHtml(session.username)}</strong>.</p>
<input type="hidden" name="csrf" value="${escapeHtml(session.csrf)}"><input type="hidden" name="userCode" value="${escapeHtml(pairing.userCode)}">
<button type="submit" name="action" value="approve">Approve</button><button type="submit" name="action" value="deny">Deny</button></form></main>`
    : `<div id="form"><label for="api-key">Your API key (used once by this page, never stored)</label>
<input id="api-key" type="password" autocomplete="off" spellcheck="false" placeholder="svc_sk_…">
<button type="button" data-action="approve">Approve</button><button type="button" data-action="deny">Deny</button>
<p><a href="/signin?next=${escapeHtml(encodeURIComponent(`/api/v1/local-agent/pair?code=${pairing.userCode}`))}">Sign in with your password instead</a></p></div>
<p id="result" role="status"></p></main>
<script nonce="${nonce}">${SCRIPT}</script>`
}`;
  return { status: 200, html: page(nonce, body) };
}
