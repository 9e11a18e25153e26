#!/usr/bin/env bash
# Terminal UI benchmarks (issue 8): prints figures, asserts nothing.
#
# 1. `cargo bench --bench ui_render`: renderer throughput, and per-chunk latency (chunk
#    arrival to bytes written) while text streams at 2,000 tokens/s.
# 2. End to end: the release binary against scripts/mock-model.py streaming ~6,000 tokens at
#    2,000 tokens/s, rendered in colour in a pseudo-terminal (util-linux `script`), and the
#    same stream as --json (no rendering). "lag" is the agent's exit minus the mock's last
#    byte: a renderer that falls behind shows a growing lag.
#
# Usage: scripts/bench-ui.sh [--skip-cargo-bench]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

if [[ "${1:-}" != "--skip-cargo-bench" ]]; then
  cargo bench --bench ui_render
fi
cargo build --release --quiet 2>/dev/null

WORK=$(mktemp -d)
MOCK_PID=
cleanup() {
  if [[ -n "$MOCK_PID" ]]; then kill "$MOCK_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

python3 - "$ROOT/benches/ui_render.rs" "$WORK/script.json" <<'PY'
import json, sys
source = open(sys.argv[1]).read()
answer = source.split('r#"', 1)[1].split('"#', 1)[0]
json.dump([{"text": answer * 20, "think_ms": 0}] * 6, open(sys.argv[2], "w"))
PY
PORT=$((20000 + RANDOM % 20000))
python3 scripts/mock-model.py "$WORK/script.json" --port "$PORT" --tokens-per-second 2000 \
  --timing "$WORK/timing" 2>/dev/null &
MOCK_PID=$!
sleep 0.5

mkdir -p "$WORK/ws/.git" "$WORK/home"
cd "$WORK/ws"
ENV=(env -i "PATH=$PATH" "HOME=$WORK/home" "AGENT_HOME=$WORK/home"
  "BASE_URL=http://127.0.0.1:$PORT/v1" MODEL=mock)
AGENT="$ROOT/target/release/agent"
TOKENS=$(python3 -c "import json; print(len(json.load(open('$WORK/script.json'))[0]['text']) // 4)")
echo "end to end: $TOKENS tokens streamed at 2,000 tokens/s"

# Prints the stream time and the lag of the run that just ended.
report() {
  python3 - "$WORK/timing" "$1" "$(date +%s.%N)" <<'PY'
import sys
words = open(sys.argv[1]).read().split()
start, end = float(words[-3]), float(words[-1])
print(f"  {sys.argv[2]}: stream {end - start:.2f} s, lag after the last byte {1000 * (float(sys.argv[3]) - end):.0f} ms")
PY
}

for run in 1 2 3; do
  "${ENV[@]}" "$AGENT" --json explain > /dev/null
  report "run $run, --json (no rendering)   "
  script -q -c "${ENV[*]} TERM=xterm-256color $AGENT explain" /dev/null > /dev/null
  report "run $run, colour markdown in a pty"
done
