#!/usr/bin/env bash
# Starts the server with the README's start command on a fresh data directory and waits up to
# 10 s for /healthz; then stops it with SIGTERM and expects a clean exit.
set -u
port=18787
data=$(mktemp -d)
# Its own process group, so stopping it reaches npm and the server under it, and nothing else.
TANDEM_PORT=$port TANDEM_DATA_DIR="$data" setsid npm start >"$data/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do
  if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
    healthy=1
    break
  fi
  sleep 0.1
done
kill -TERM -- "-$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ "${healthy:-0}" != 1 ]; then
  echo "the server did not answer /healthz within 10 s:"
  cat "$data/server.log"
  rm -rf "$data"
  exit 1
fi
rm -rf "$data"
