/**
 * The page an invite's `inviteUrl` opens. The token rides in the URL's #fragment, which browsers
 * never send to a server: it appears in no access log, proxy log or Referer. The page is the same
 * for every invite; its script reads the fragment, takes the invitee's API key, and posts both
 * to the accept route of this same server, then forgets them. CSP allows only its own nonce'd
 * script and style, and connections to this origin.
 */

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.4rem}input{width:100%;padding:.5rem;font:inherit;box-sizing:border-box}
button{font:inherit;padding:.5rem 1.2rem;margin:.8rem .6rem 0 0;cursor:pointer}#result{margin-top:1rem;font-weight:600}
.ok{color:#1a7f37}.error{color:#c62828}`;

const SCRIPT = `(() => {
  const token = decodeURIComponent(location.hash.slice(1));
  history.replaceState(null, "", location.pathname);
  const key = document.getElementById("api-key");
  const result = document.getElementById("result");
  const button = document.getElementById("join");
  const show = (text, kind) => { result.textContent = text; result.className = kind; };
  if (!token) { document.getElementById("form").hidden = true; show("This link has no invite in it. Ask for the whole link again.", "error"); return; }
  button.addEventListener("click", async () => {
    const credential = key.value.trim();
    if (!credential) { show("Enter your API key first.", "error"); key.focus(); return; }
    button.disabled = true;
    try {
      const response = await fetch("accept", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer " + credential },
        body: JSON.stringify({ token }),
        credentials: "omit",
        cache: "no-store",
      });
      const body = await response.json().catch(() => ({}));
      if (response.ok) {
        key.value = "";
        document.getElementById("form").hidden = true;
        show(body.message || "You joined the team.", "ok");
        return;
      }
      show(body.message || "The server answered " + response.status + ".", "error");
    } catch {
      show("Could not reach the server.", "error");
    }
    button.disabled = false;
  });
})();`;

export function renderTeamJoinPage(nonce: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>Join the team — Tandem</title><style nonce="${nonce}">${STYLE}</style></head>
<body><main><h1>Join the team</h1>
<p>You were invited to this Tandem server's team. Join with your own account: enter one of its API keys (an account
administrator creates accounts with <code>tandem-server users add</code>). If the invite was sent to an email address,
only the account with that email can accept it.</p>
<div id="form"><label for="api-key">Your API key (used once by this page, never stored)</label>
<input id="api-key" type="password" autocomplete="off" spellcheck="false" placeholder="svc_sk_…">
<button type="button" id="join">Join</button></div>
<p id="result" role="status"></p></main>
<script nonce="${nonce}">${SCRIPT}</script></body></html>`;
}
