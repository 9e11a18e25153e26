#!/usr/bin/env bash
# Sandbox and process-execution benchmarks (BENCHMARKS.md, "Sandbox and process execution").
# Builds the tests optimized and runs the ignored `sandbox_bench` tests, which print:
#   - median wall time and children CPU time of `bash -c true` with the sandbox off,
#     workspace-write and read-only (300 runs each), and the difference (start-up overhead);
#     then Landlock only, namespaces with nothing to mount, and namespaces with a session's
#     usual mounts (issue 15);
#   - the session-start costs of the namespace probe and the walk for repositories;
#   - capture of 1 GiB of text: wall MB/s and the capture's own CPU cost;
#   - peak RSS of the real `agent` binary during a one-shot session whose bash call prints 1 GiB.
# Usage: scripts/bench-sandbox.sh
set -euo pipefail
cd "$(dirname "$0")/.."
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), cores: $(nproc)"
cargo test --release --test all -- --ignored --nocapture --test-threads 1 sandbox_bench 2>/dev/null \
  | grep -oE "(bash \`true\`|sandbox start-up|session start|capture of|agent one-shot).*"
