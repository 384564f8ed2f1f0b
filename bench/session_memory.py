"""What a session's memory costs: long conversations and one huge upstream delta.

    python -m bench.session_memory                       # this checkout
    python -m bench.session_memory --compare-py OTHER/py # plus another checkout, side by side

1. Conversation model, in process: N runs with 32 KB prompts in one session (the
   issue-12 case), default bounds vs. bounds set out of reach: messages and bytes
   kept, resume-snapshot size, and the cost per run early vs. late in the session.
2. A real `streampace serve` process with an OpenAI-compatible fake upstream whose
   answer is one 10 MB delta: server RSS before, after that run and after two more
   small runs.  ``--compare-py`` runs the same server from another source tree
   (e.g. a checkout of main) in the same invocation.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from streampace.conversation.transcript import Transcript
from streampace.session.framing import RunFramer

DEFAULT_BOUNDS = (1_000, 4 * 1024 * 1024)  # ServerConfig's history_messages / history_bytes


def _apply(conv: Any, event: dict[str, Any]) -> None:
    # A Transcript, or the Conversation class of an older checkout (--compare-py).
    if hasattr(conv, "apply_event"):
        conv.apply_event(event)
    else:
        conv.apply(event)


def _messages(conv: Any) -> list[dict[str, Any]]:
    return conv.as_messages() if hasattr(conv, "as_messages") else conv.messages


def _one_run(conv: Any, n: int, prompt: str, answer: str) -> float:
    t0 = time.perf_counter()
    conv.history()  # what every run hands its source
    framer = RunFramer("t", f"r{n}", prompt, validate=False)
    events = framer.feed_group(
        [{"type": "TEXT_MESSAGE_START", "messageId": f"a{n}", "role": "assistant"}]
        + [{"type": "TEXT_MESSAGE_CONTENT", "messageId": f"a{n}", "delta": answer[i:i + 4]}
           for i in range(0, len(answer), 4)]
        + [{"type": "TEXT_MESSAGE_END", "messageId": f"a{n}"},
           {"type": "RUN_FINISHED", "threadId": "t", "runId": f"r{n}"}])
    for e in events:
        _apply(conv, e)
    return time.perf_counter() - t0


def _other_conversation(py_dir: str) -> Any:
    """The conversation model of another checkout (its module file, loaded by path):
    streampace/conversation/transcript.py, or server/conversation.py before issue 8."""
    import importlib.util

    path = Path(py_dir) / "streampace" / "transcript.py"
    if not path.exists():
        path = Path(py_dir) / "streampace" / "server" / "conversation.py"
    spec = importlib.util.spec_from_file_location("other_conversation", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if hasattr(module, "Transcript"):
        return lambda: module.Transcript(*DEFAULT_BOUNDS)
    return module.Conversation


def conversation_figures(runs: int, compare_py: str | None = None) -> list[dict[str, Any]]:
    prompt, answer = "p" * 32_768, "an answer of some length. " * 80
    rows = []
    convs: list[tuple[str, Any]] = [
        ("default bounds (1000 msgs / 4 MiB)", Transcript(*DEFAULT_BOUNDS)),
        ("bounds out of reach", Transcript(10**9, 2**62)),
    ]
    if compare_py:
        convs.append((f"{compare_py} Conversation", _other_conversation(compare_py)()))
    for label, conv in convs:
        times = [_one_run(conv, n, prompt, answer) for n in range(runs)]
        snap = len(json.dumps(conv.snapshot_events()).encode())
        rows.append({
            "conversation": label,
            "messages_kept": len(_messages(conv)),
            "text_bytes_kept": sum(len(m.get("content") or "") for m in _messages(conv)),
            "snapshot_bytes": snap,
            "ms_per_run_first_100": round(1000 * sum(times[:100]) / 100, 3),
            "ms_per_run_last_100": round(1000 * sum(times[-100:]) / 100, 3),
        })
    return rows


# -- the 10 MB delta against a real server process ---------------------------------


class _Upstream:
    def __init__(self, big_chars: int) -> None:
        self.big = "".join(chr(0x61 + i % 26) for i in range(big_chars))

        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                huge = body["messages"][-1]["content"] == "huge"
                text = outer.big if huge else "a small answer"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                chunk = {"choices": [{"index": 0, "delta": {"content": text}}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def huge_delta_figures(upstream: _Upstream, pythonpath: str | None) -> dict[str, Any]:
    import asyncio

    import websockets

    port = _port()
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    helptext = subprocess.run([sys.executable, "-m", "streampace", "serve", "--help"],
                              env=env, capture_output=True, text=True).stdout
    named = ["--client-session-ids"] if "--client-session-ids" in helptext else []
    proc = subprocess.Popen([sys.executable, "-m", "streampace", "serve", "--port", str(port),
                             "--source", f"openai:{upstream.url}", "--model", "m",
                             "--log-level", "error", *named], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)

        async def run(prompt: str, viewers: int) -> None:
            url = f"ws://127.0.0.1:{port}/ws/sessions/mem"
            socks = [await websockets.connect(url, max_size=None) for _ in range(viewers)]
            for ws in socks:
                await ws.send(json.dumps({"type": "resume", "after": 0}))
            await socks[0].send(json.dumps({"type": "run", "prompt": prompt}))
            for ws in socks:
                while True:
                    msg = json.loads(await ws.recv())
                    if any(e["type"] in ("RUN_FINISHED", "RUN_ERROR")
                           for e in msg.get("events", ())):
                        break
            for ws in socks:
                await ws.close()

        out = {"rss_before_mib": _rss_mib(proc.pid)}
        asyncio.run(run("huge", 3))
        time.sleep(0.5)
        out["rss_after_10mb_run_mib"] = _rss_mib(proc.pid)
        for _ in range(2):
            asyncio.run(run("small", 1))
        time.sleep(0.5)
        out["rss_after_2_more_runs_mib"] = _rss_mib(proc.pid)
        out["added_mib"] = round(out["rss_after_2_more_runs_mib"] - out["rss_before_mib"], 1)
        return out
    finally:
        proc.terminate()
        proc.wait(15)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.session_memory")
    ap.add_argument("--runs", type=int, default=1500)
    ap.add_argument("--delta-mb", type=float, default=10.0)
    ap.add_argument("--compare-py", help="another checkout's py/ directory (e.g. main)")
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"conversation": conversation_figures(args.runs, args.compare_py)}
    upstream = _Upstream(int(args.delta_mb * 1_000_000))
    result["huge_delta, this checkout"] = huge_delta_figures(upstream, None)
    if args.compare_py:
        result[f"huge_delta, {args.compare_py}"] = huge_delta_figures(upstream, args.compare_py)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
