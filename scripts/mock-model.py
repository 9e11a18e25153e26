#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server on loopback, for demos and for
watching the terminal UI by hand (tmux, a pty) without a real model.

Usage: scripts/mock-model.py SCRIPT.json [--port 8765] [--tokens-per-second 60] [--timing FILE]

SCRIPT.json is a list of replies, served in order, one per POST /v1/chat/completions:
  {"text": "markdown answer"}                                  streamed in ~4-character tokens
  {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}], "text": "optional"}
After the script runs out every request gets a short text answer saying so.
Each request's messages are appended to SCRIPT.json.log (one JSON line per request); with
--timing, "start <unix time>" and "end <unix time>" lines for each streamed reply go to FILE.
Point agent at it with BASE_URL=http://127.0.0.1:PORT/v1 MODEL=mock.
"""
import argparse
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATE = {"replies": [], "next": 0, "delay": 1 / 60, "log": None, "timing": None}


def timing(event):
    if STATE["timing"]:
        with open(STATE["timing"], "a") as f:
            f.write(f"{event} {time.time():.6f}\n")


def chunk(delta=None, finish=None, usage=None):
    body = {"id": "mock", "object": "chat.completion.chunk", "model": "mock",
            "choices": [] if usage else [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return "data: " + json.dumps(body) + "\n\n"


def tokens(text):
    return [text[i:i + 4] for i in range(0, len(text), 4)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("content-length", 0))
        request = json.loads(self.rfile.read(length) or b"{}")
        if STATE["log"]:
            with open(STATE["log"], "a") as log:
                log.write(json.dumps(request.get("messages", [])) + "\n")
        index = STATE["next"]
        STATE["next"] += 1
        reply = STATE["replies"][index] if index < len(STATE["replies"]) else {
            "text": "(the mock script has no more replies)"}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        timing("start")
        try:
            self.stream(reply, request)
        except (BrokenPipeError, ConnectionResetError):
            pass
        timing("end")
        self.close_connection = True

    def stream(self, reply, request):
        write = lambda s: (self.wfile.write(s.encode()), self.wfile.flush())
        prompt_tokens = sum(len(json.dumps(m)) for m in request.get("messages", [])) // 4
        completion = 0
        time.sleep(reply.get("think_ms", 400) / 1000)
        for piece in tokens(reply.get("text", "")):
            write(chunk({"content": piece}))
            completion += 1
            time.sleep(STATE["delay"])
        calls = reply.get("tool_calls", [])
        for i, call in enumerate(calls):
            args = json.dumps(call.get("arguments", {}))
            write(chunk({"tool_calls": [{"index": i, "id": f"call_{STATE['next']}_{i}", "type": "function",
                                         "function": {"name": call["name"], "arguments": args}}]}))
            completion += len(args) // 4
        write(chunk(finish="tool_calls" if calls else "stop"))
        write(chunk(usage={"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                           "total_tokens": prompt_tokens + completion}))
        write("data: [DONE]\n\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--tokens-per-second", type=float, default=60)
    parser.add_argument("--timing")
    args = parser.parse_args()
    with open(args.script) as f:
        STATE["replies"] = json.load(f)
    STATE["delay"] = 1 / args.tokens_per_second
    STATE["log"] = args.script + ".log"
    STATE["timing"] = args.timing
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"mock model on http://127.0.0.1:{args.port}/v1", file=sys.stderr)
    server.serve_forever()


if __name__ == "__main__":
    main()
