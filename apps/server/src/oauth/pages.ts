import { randomBytes } from "node:crypto";
import { scopeInWords } from "@tandem/core";
import { escapeHtml } from "../http/escape-html";
import { htmlPageHeaders } from "../http/html-page-headers";

/**
 * The sign-in, consent and first-run pages. Server-rendered, no script; every value is escaped
 * (client names and URIs come from whoever registered the client). Forms post only to this server,
 * except that a form whose answer redirects to a client's callback must list that callback's
 * origin, because browsers apply `form-action` to the redirects a form submission follows.
 */

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:30rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.4rem}label{display:block;margin-top:.8rem}input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
button{font:inherit;padding:.5rem 1.2rem;margin:1rem .6rem 0 0;cursor:pointer}.error{color:#c62828;font-weight:600}
.warn{background:#fff4e5;padding:.6rem .8rem;border-radius:6px}ul{padding-left:1.2rem}.muted{color:#666}code{word-break:break-all}`;

export interface Page {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly html: string;
}

/** The `form-action` sources for a page whose form may end in a redirect to `redirectUri`. */
function formActionFor(redirectUri: string | undefined): string {
  const sources = ["'self'"];
  if (redirectUri) {
    try {
      const url = new URL(redirectUri);
      if (url.protocol === "http:" || url.protocol === "https:") sources.push(url.origin);
      else if (/^[a-z][a-z0-9+.-]*:$/.test(url.protocol)) sources.push(url.protocol);
    } catch {
      // Not a URL: the provider refuses it before any page is shown.
    }
  }
  return `form-action ${sources.join(" ")}`;
}

function render(status: number, title: string, body: string, redirectUri?: string): Page {
  const nonce = randomBytes(18).toString("base64");
  const headers = htmlPageHeaders([`style-src 'nonce-${nonce}'`]);
  headers["content-security-policy"] = (headers["content-security-policy"] as string).replace(
    "form-action 'none'",
    formActionFor(redirectUri),
  );
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)} — Tandem</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
  return { status, headers, html };
}

function hidden(name: string, value: string): string {
  return `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;
}

export function signInPage(input: {
  action: string;
  csrf: string;
  error?: string;
  clientName?: string;
  next?: string;
  redirectUri?: string;
  status?: number;
}): Page {
  const intro = input.clientName
    ? `<p><strong>${escapeHtml(input.clientName)}</strong> asks to connect to your Tandem account. Sign in to continue.</p>`
    : "<p>Sign in to your Tandem account.</p>";
  const body = `<h1>Sign in</h1>${intro}
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ""}
<form method="post" action="${escapeHtml(input.action)}">${hidden("csrf", input.csrf)}${input.next ? hidden("next", input.next) : ""}
<label for="username">Username</label><input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="64">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024">
<button type="submit">Sign in</button></form>`;
  return render(input.status ?? 200, "Sign in", body, input.redirectUri);
}

export function consentPage(input: {
  action: string;
  csrf: string;
  username: string;
  clientName: string;
  clientId: string;
  redirectUri: string;
  scopes: readonly string[];
  resources: readonly string[];
}): Page {
  const items = input.scopes.map(
    (scope) => `<li>${escapeHtml(scopeInWords(scope))} <span class="muted">(<code>${escapeHtml(scope)}</code>)</span></li>`,
  );
  const body = `<h1>Allow access?</h1>
<p><strong>${escapeHtml(input.clientName)}</strong> asks for access to your Tandem account (<strong>${escapeHtml(input.username)}</strong>). It will be able to:</p>
<ul>${items.join("") || "<li>Know that you signed in (nothing else)</li>"}</ul>
<p class="muted">Client id <code>${escapeHtml(input.clientId)}</code>; it answers at <code>${escapeHtml(input.redirectUri)}</code>${
    input.resources.length ? `; for <code>${input.resources.map(escapeHtml).join("</code>, <code>")}</code>` : ""
  }.</p>
<p class="warn">Allow only if you started this yourself, just now. You can disconnect it later under Connected apps.</p>
<form method="post" action="${escapeHtml(input.action)}">${hidden("csrf", input.csrf)}
<button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny">Deny</button></form>`;
  return render(200, "Allow access", body, input.redirectUri);
}

export function firstRunPage(input: { action: string; csrf: string; error?: string; status?: number }): Page {
  const body = `<h1>Welcome to Tandem</h1>
<p>This server has no accounts yet. Create the first one (it administers the server). This page is offered once, and only to a browser on the machine the server runs on.</p>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ""}
<form method="post" action="${escapeHtml(input.action)}">${hidden("csrf", input.csrf)}
<label for="username">Username</label><input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="64">
<label for="name">Name (optional)</label><input id="name" name="name" autocomplete="name" maxlength="200">
<label for="password">Password (at least 8 characters)</label><input id="password" name="password" type="password" autocomplete="new-password" required maxlength="1024">
<button type="submit">Create account</button></form>`;
  return render(input.status ?? 200, "Welcome", body);
}

/**
 * Asked at a remote tool server's OAuth callback when the browser has no Tandem session: whose
 * Tandem account the approval would go to, and which server. The code and state ride in hidden
 * fields of a POST, never in a URL again.
 */
export function confirmToolServerPage(input: {
  action: string;
  state: string;
  code: string;
  csrf: string;
  username: string;
  displayName: string | null;
  serverName: string;
  serverUrl: string;
}): Page {
  const account = input.displayName
    ? `<strong>${escapeHtml(input.displayName)}</strong> (<code>${escapeHtml(input.username)}</code>)`
    : `<strong>${escapeHtml(input.username)}</strong>`;
  const body = `<h1>Connect a tool server?</h1>
<p>You approved access at the tool server <strong>${escapeHtml(input.serverName)}</strong> <span class="muted">(<code>${escapeHtml(input.serverUrl)}</code>)</span>.</p>
<p>Connect lets the Tandem account ${account} use it with your approval.</p>
<p class="warn">Connect only if that is your Tandem account and you started this yourself, just now. If someone sent you the link, cancel: they would get your access.</p>
<form method="post" action="${escapeHtml(input.action)}">${hidden("state", input.state)}${hidden("code", input.code)}${hidden("csrf", input.csrf)}
<button type="submit" name="decision" value="connect">Connect</button><button type="submit" name="decision" value="cancel">Cancel</button></form>`;
  return render(200, "Connect a tool server", body);
}

export function messagePage(status: number, title: string, text: string, extraHtml = ""): Page {
  return render(status, title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>${extraHtml}`);
}

export interface ConnectedAppRow {
  readonly clientId: string;
  readonly clientName: string | null;
  readonly scopes: readonly string[];
  readonly grantedAt: string;
  readonly lastUsedAt: string | null;
}

/** The signed-in person's account page: connected apps with Disconnect, and Sign out. */
export function accountPage(input: { username: string; csrf: string; apps: readonly ConnectedAppRow[]; notice?: string }): Page {
  const rows = input.apps.map(
    (
      app,
    ) => `<li><strong>${escapeHtml(app.clientName ?? app.clientId)}</strong> <span class="muted">(<code>${escapeHtml(app.clientId)}</code>)</span><br>
${escapeHtml(app.scopes.map((scope) => scopeInWords(scope)).join("; ") || "No access beyond knowing you signed in")}<br>
<span class="muted">Connected ${escapeHtml(app.grantedAt)}; last used ${escapeHtml(app.lastUsedAt ?? "never")}</span>
<form method="post" action="/account/apps/disconnect">${hidden("csrf", input.csrf)}${hidden("clientId", app.clientId)}<button type="submit">Disconnect</button></form></li>`,
  );
  const body = `<h1>Your account</h1><p>Signed in as <strong>${escapeHtml(input.username)}</strong>.</p>
${input.notice ? `<p role="status">${escapeHtml(input.notice)}</p>` : ""}
<h2>Connected apps</h2>
${rows.length ? `<ul>${rows.join("")}</ul>` : "<p>No apps are connected to your account.</p>"}
<form method="post" action="/signout">${hidden("csrf", input.csrf)}<button type="submit">Sign out</button></form>`;
  return render(200, "Your account", body);
}
