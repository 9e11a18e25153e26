#!/usr/bin/env bash
# Small-task evaluation against the local model (or any endpoint in $AGENT_HOME/env).
#
# Usage: scripts/eval-local.sh [AGENT_BINARY] [PASSES]
#        scripts/eval-local.sh --self-test   (each check fails before, passes after a reference fix)
#   AGENT_BINARY  default: the release binary cargo builds (built first)
#   PASSES        default 1
# Environment: EVAL_ENV (env file with BASE_URL/MODEL; default ~/.agents/env),
#   EVAL_TIMEOUT (seconds per task, default 300), EVAL_OUT (transcripts, default /tmp/agent-eval),
#   EVAL_TASKS (space-separated task names to run; default all), EVAL_FIRST_PASS (number of
#   the first pass, default 1, to finish an interrupted run).
# Prints one line per task and pass (PASS/FAIL, seconds) and a summary table.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/eval/tasks.sh"
TASKS=${EVAL_TASKS:-$TASKS}
if [ "${1:-}" = "--self-test" ]; then
  bad=0
  for task in $TASKS; do
    ws=$(mktemp -d /tmp/eval-ws.XXXXXX)
    if (cd "$ws" && git init -q . && "setup_$task" && ! "check_$task" && "solve_$task" && "check_$task"); then
      echo "$task: ok"
    else
      echo "$task: the check does not fail before or pass after the reference solution"; bad=1
    fi
    rm -rf "$ws"
  done
  exit $bad
fi
bin=${1:-}
passes=${2:-1}
if [ -z "$bin" ]; then
  bin=$(cd "$here/.." && cargo build --release --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m["target"]["name"]=="agent": print(m["executable"])' | tail -1)
fi
[ -x "$bin" ] || { echo "eval: no agent binary ($bin)" >&2; exit 2; }
envfile=${EVAL_ENV:-$HOME/.agents/env}
[ -f "$envfile" ] || { echo "eval: no env file $envfile (run scripts/local-model.sh start)" >&2; exit 2; }
timeout_s=${EVAL_TIMEOUT:-300}
out=${EVAL_OUT:-/tmp/agent-eval}
mkdir -p "$out"
declare -A wins
total=0; passed=0
first=${EVAL_FIRST_PASS:-1}
for pass in $(seq "$first" $((first + passes - 1))); do
  for task in $TASKS; do
    ws=$(mktemp -d /tmp/eval-ws.XXXXXX); home=$(mktemp -d /tmp/eval-home.XXXXXX)
    cp "$envfile" "$home/env"
    (cd "$ws" && git init -q . && "setup_$task")
    start=$(date +%s)
    (cd "$ws" && AGENT_HOME=$home timeout "$timeout_s" "$bin" --yes "$("prompt_$task")" \
      </dev/null >"$out/$task.$pass.out" 2>"$out/$task.$pass.err")
    code=$?
    took=$(( $(date +%s) - start ))
    if (cd "$ws" && "check_$task"); then verdict=PASS; passed=$((passed+1)); wins[$task]=$(( ${wins[$task]:-0} + 1 )); else verdict=FAIL; fi
    total=$((total+1))
    printf '%-14s pass %d  %s  %4ds  (exit %d)\n' "$task" "$pass" "$verdict" "$took" "$code"
    rm -rf "$ws" "$home"
  done
done
echo
printf '%-14s %s\n' task "passed/$passes"
for task in $TASKS; do printf '%-14s %d\n' "$task" "${wins[$task]:-0}"; done
echo "total: $passed/$total"
