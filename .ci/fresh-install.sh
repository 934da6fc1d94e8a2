#!/usr/bin/env bash
# The README's first steps on a fresh install, as a user takes them: `npm start`, the page at `/`, then
# `npx tandem-server users add` from a subfolder (it must find the server's database, never start
# another), a key that works, and a second server failing in one line: on the same database (another
# instance without Redis) and on a busy port.
set -u
cd "$(dirname "$0")/.."
port=18788
data=$(mktemp -d)
fail() { echo "$1"; [ -f "$data/server.log" ] && tail -n 20 "$data/server.log"; kill -TERM -- "-${pid:-0}" 2>/dev/null; rm -rf "$data"; exit 1; }

# Before the server ever ran, the CLI refuses to make a database up, and creates nothing.
out=$(cd apps/server && TANDEM_DATA_DIR="$data/db" npx tandem-server users add alice 2>&1) && fail "users add created a database: $out"
grep -q -- "--create-database" <<<"$out" || fail "users add did not say how to create a database: $out"
[ ! -e "$data/db/tandem.sqlite" ] && [ ! -e apps/server/data ] || fail "users add left a database behind"

TANDEM_PORT=$port TANDEM_DATA_DIR="$data/db" setsid npm start >"$data/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
# With no account yet, the root page opened on this machine offers to create the first one.
curl -fsS "http://127.0.0.1:$port/" | grep -q "<h1>Welcome to Tandem</h1>" || fail "GET / on a new server is not the first-run page"

key=$(cd apps/server && TANDEM_DATA_DIR="$data/db" npx tandem-server users add alice 2>/dev/null | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).apiKey') ||
  fail "users add failed against the running server's database"
curl -fsS -H "Authorization: Bearer $key" "http://127.0.0.1:$port/api/v1/identity" | grep -q '"username":"alice"' ||
  fail "the running server refused the key users add printed"
curl -fsS "http://127.0.0.1:$port/" | grep -q "<h1>Tandem server</h1>" || fail "GET / is not the server's page once an account exists"

# (npm's own warnings about its configuration are not the server's output.)
# A second server on the same database, without Redis, is refused before it listens: one line naming the first.
twin=$(TANDEM_DATA_DIR="$data/db" timeout 30 npx tandem-server serve --port 0 2>&1) && fail "a second server on the same database did not fail"
twin=$(grep -v '^npm warn' <<<"$twin")
[ "$(wc -l <<<"$twin")" -eq 1 ] && grep -q "another Tandem instance" <<<"$twin" || fail "a second instance was not one clear line: $twin"
# A server of its own on a busy port: one line too.
busy=$(TANDEM_DATA_DIR="$data/other" npx tandem-server serve --port $port 2>&1) && fail "a second server on a busy port did not fail"
busy=$(grep -v '^npm warn' <<<"$busy")
[ "$(wc -l <<<"$busy")" -eq 1 ] && grep -q "already in use" <<<"$busy" || fail "a busy port was not one clear line: $busy"

kill -TERM -- "-$pid" 2>/dev/null
wait "$pid" 2>/dev/null
rm -rf "$data"
