#!/usr/bin/env bash
# Sandbox and process-execution benchmarks (BENCHMARKS.md, "Sandbox and process execution"):
# runs `cargo bench --bench sandbox` (benches/sandbox.rs), which prints the load average, then
#   - median wall time and children CPU time of `bash -c true` with the sandbox off,
#     workspace-write and read-only (300 runs each), and the difference (start-up overhead);
#     then Landlock only, namespaces with nothing to mount, and namespaces with a session's
#     usual mounts (issue 15);
#   - capture of 1 GiB of text: wall MB/s and the capture's own CPU cost;
#   - peak RSS of the real `agent` binary during a one-shot session whose bash call prints 1 GiB;
#   - the session-start costs of the namespace probe and the walk for repositories.
# Usage: scripts/bench-sandbox.sh [startup|capture|rss|session ...]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench --quiet --bench sandbox -- "$@"
