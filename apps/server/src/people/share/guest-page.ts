import { randomBytes } from "node:crypto";
import { escapeHtml } from "../../http/escape-html";
import { htmlPageHeaders } from "../../http/html-page-headers";
import type { WebSession } from "../../oauth/web-session";
import type { guestMeta } from "./guest-chat";
import { GUEST_CSRF_HEADER } from "./share-guard";

/**
 * The page a share link opens, `/a/<token>`: a chat with the owner's agent for a person on any
 * screen. Everything on it is escaped; the agent's answers are Markdown read by the desktop's own
 * reader (`@tandem/core/rich-text`, see guest-rich-text.ts) into elements made one by one, with
 * text as text nodes, never as HTML, so nothing the agent (or a note it quotes) says can run or
 * restyle the page. The scripts run under a per-response nonce and may talk only to this server.
 */

export function newPageNonce(): string {
  return randomBytes(18).toString("base64");
}

export function guestPageHeaders(nonce: string): Record<string, string> {
  return htmlPageHeaders([`script-src 'nonce-${nonce}'`, `style-src 'nonce-${nonce}'`, "connect-src 'self'"]);
}

type Meta = Awaited<ReturnType<typeof guestMeta>>;

const STYLE = `*{box-sizing:border-box}html,body{height:100%}
body{margin:0;font:16px/1.45 system-ui,-apple-system,sans-serif;color:#1d1d1f;background:#f5f5f7;display:flex;flex-direction:column}
header{padding:.8rem 1rem;background:#fff;border-bottom:1px solid #ddd}header h1{font-size:1.1rem;margin:0}header p{margin:.2rem 0 0;color:#666;font-size:.9rem}
main{flex:1;overflow-y:auto;padding:1rem;display:flex;flex-direction:column;gap:.6rem;max-width:48rem;width:100%;margin:0 auto}
.msg{padding:.6rem .8rem;border-radius:12px;max-width:85%;white-space:pre-wrap;overflow-wrap:anywhere}
.user{align-self:flex-end;background:#0a66d8;color:#fff}.assistant{align-self:flex-start;background:#fff;border:1px solid #ddd;white-space:normal}
.assistant>:first-child{margin-top:0}.assistant>:last-child{margin-bottom:0}.assistant p,.assistant ul,.assistant ol,.assistant pre,.assistant blockquote{margin:.45rem 0}
.assistant ul,.assistant ol{padding-left:1.3rem}.assistant h3,.assistant h4,.assistant h5,.assistant h6{margin:.7rem 0 .3rem;font-size:1rem}
.assistant pre{white-space:pre-wrap;background:#f2f2f4;padding:.5rem;border-radius:6px}.assistant code{font:.9em ui-monospace,monospace}
.assistant blockquote{margin-left:0;padding-left:.7rem;border-left:3px solid #ccc;color:#555}.assistant table{border-collapse:collapse}.assistant td,.assistant th{border:1px solid #ddd;padding:.2rem .4rem}
.note{color:#666;font-size:.9rem;text-align:center}.error{color:#b3261e;text-align:center}
form{display:flex;flex-wrap:wrap;gap:.5rem;padding:.6rem;background:#fff;border-top:1px solid #ddd;max-width:48rem;width:100%;margin:0 auto}
textarea{flex:1 1 12rem;min-width:0;font:inherit;padding:.55rem;border:1px solid #bbb;border-radius:8px;resize:none;height:2.8rem}
button,a.button{font:inherit;padding:.55rem 1.1rem;border:0;border-radius:8px;background:#0a66d8;color:#fff;cursor:pointer;text-decoration:none;display:inline-block}button:disabled{opacity:.5}`;

/** The page's behaviour: send, show, remember the session (per link) so a reload continues it. */
const SCRIPT = `(() => {
  const root = document.getElementById("guest");
  const token = root.dataset.token;
  // Set on a link that needs sign-in, once the browser is signed in: sent with the session cookie.
  const csrf = root.dataset.csrf || null;
  const storeKey = "tandem-guest:" + token;
  const log = document.getElementById("log");
  const form = document.getElementById("form");
  const text = document.getElementById("message");
  const send = document.getElementById("send");
  const status = document.getElementById("status");
  let sessionKey = null;
  try { sessionKey = localStorage.getItem(storeKey); } catch {}
  const show = (role, content) => {
    const item = document.createElement("div");
    item.className = "msg " + role;
    if (role === "assistant") TandemRichText.appendMarkdown(document, item, content);
    else item.textContent = content;
    log.appendChild(item);
    log.scrollTop = log.scrollHeight;
    return item;
  };
  const say = (message, kind) => { status.textContent = message; status.className = kind || "note"; };
  const headers = () => {
    const h = { "content-type": "application/json" };
    if (csrf) h["${GUEST_CSRF_HEADER}"] = csrf;
    return h;
  };
  const credentials = csrf ? "same-origin" : "omit";
  const signInAgain = () => {
    say("You are no longer signed in. ", "error");
    const link = document.createElement("a");
    link.href = "/signin?next=" + encodeURIComponent(location.pathname);
    link.textContent = "Sign in again";
    status.appendChild(link);
  };
  const end = (message) => { say(message, "error"); text.disabled = true; send.disabled = true; };
  async function restore() {
    if (!sessionKey) return;
    try {
      const r = await fetch("/api/chat/guest-v04?token=" + encodeURIComponent(token) + "&sessionKey=" + encodeURIComponent(sessionKey), { headers: headers(), cache: "no-store", credentials });
      if (r.status === 404) {
        const body = await r.json().catch(() => ({}));
        if (body.error === "share_link_not_found") return end("This link is no longer valid: it has expired or was revoked.");
        sessionKey = null; try { localStorage.removeItem(storeKey); } catch {}
        return;
      }
      if (!r.ok) return;
      const body = await r.json();
      for (const m of body.messages || []) show(m.role === "user" ? "user" : "assistant", m.content);
    } catch {}
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const message = text.value.trim();
    if (!message) return;
    show("user", message);
    text.value = "";
    send.disabled = true;
    say("Waiting for the answer…");
    try {
      const r = await fetch("/api/chat/guest-v04", {
        method: "POST", headers: headers(), cache: "no-store", credentials,
        body: JSON.stringify(sessionKey ? { token, message, sessionKey } : { token, message }),
      });
      const body = await r.json().catch(() => ({}));
      if (r.ok) {
        sessionKey = body.sessionKey;
        try { localStorage.setItem(storeKey, sessionKey); } catch {}
        show("assistant", body.response);
        say(body.messagesLeft === 0 ? "This conversation has reached its message limit." : "");
      } else if (r.status === 404 && body.error === "session_not_found") {
        sessionKey = null; try { localStorage.removeItem(storeKey); } catch {}
        say("That conversation has ended; send your message again to start a new one.", "error");
      } else if (r.status === 404) {
        end("This link is no longer valid: it has expired or was revoked.");
      } else if (r.status === 401) {
        signInAgain();
      } else {
        say(body.message || ("The server answered " + r.status + "."), "error");
      }
    } catch {
      say("Could not reach the server. Try again.", "error");
    }
    if (!text.disabled) send.disabled = false;
    text.focus();
  });
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
  });
  restore();
})();`;

function page(nonce: string, title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style nonce="${nonce}">${STYLE}</style></head>
<body>${body}</body></html>`;
}

/**
 * The chat page. A link that needs sign-in asks the visitor to sign in with their Tandem account
 * (the server's sign-in page, which returns here) and never for a key; `visitor` is the browser's
 * signed-in session then, null when nobody is signed in. `richText`: the bundled Markdown renderer,
 * from `guestRichTextScript()`.
 */
export function renderGuestPage(nonce: string, token: string, meta: Meta, richText: string, visitor: WebSession | null = null): string {
  const intro = meta.label ? `${meta.label} · ` : "";
  const header = `<header><h1>${escapeHtml(meta.agentName)}</h1><p>${escapeHtml(intro)}You are talking to ${escapeHtml(meta.ownerName)}'s agent. It can only see what ${escapeHtml(meta.ownerName)} shared through this link.</p></header>`;
  if (meta.requireSignIn && !visitor) {
    const signIn = `/signin?next=${encodeURIComponent(`/a/${token}`)}`;
    const body = `${header}
<main id="log"><p id="sign-in" class="note">${escapeHtml(meta.ownerName)} shares this link with people who have a Tandem account. Sign in with yours to start: ${escapeHtml(meta.ownerName)} will see your username.</p>
<p class="note"><a id="sign-in-link" class="button" href="${escapeHtml(signIn)}">Sign in to Tandem</a></p></main>`;
    return page(nonce, `${meta.agentName} — Tandem`, body);
  }
  const who = visitor
    ? `<p id="visitor" class="note">Signed in as ${escapeHtml(visitor.username)}: ${escapeHtml(meta.ownerName)} sees your username.</p>`
    : "";
  const body = `${header}
<main id="log" aria-live="polite">${who}</main>
<div id="guest" data-token="${escapeHtml(token)}"${visitor ? ` data-csrf="${escapeHtml(visitor.csrf)}"` : ""} hidden></div>
<form id="form"><textarea id="message" rows="1" maxlength="4000" placeholder="Write a message" aria-label="Message"></textarea><button id="send" type="submit">Send</button></form>
<p id="status" class="note" role="status"></p>
<script nonce="${nonce}">${richText}</script>
<script nonce="${nonce}">${SCRIPT}</script>`;
  return page(nonce, `${meta.agentName} — Tandem`, body);
}

export function renderGuestPageGone(nonce: string, status: number): string {
  const text =
    status === 429
      ? "Too many attempts from your network. Wait a minute, then try again."
      : "This link is not valid any more: it has expired or was revoked by its owner. Ask them for a new one.";
  return page(
    nonce,
    "Share link — Tandem",
    `<header><h1>Share link</h1></header><main><p id="gone" class="error">${escapeHtml(text)}</p></main>`,
  );
}
