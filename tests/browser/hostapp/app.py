"""A host application that mounts StreampaceApp, as docs/mount.md shows, for the
browser tests of issue 27 (tests/browser/test_continuity.py).

Run as its own process (`python app.py PORT`) so a test can kill it with
SIGKILL mid-answer and start it again on the same port (memory store: the
server forgets every session). Its page embeds the tag on `/ws/sessions/new`
under a strict CSP (no 'unsafe-eval', no inline script or style); `?dark=1`
makes the host page dark, `?lang=fr` sets its language, `?remember=none`
and `?labels=<json>` go to the tag's data attributes.
"""

from __future__ import annotations

import asyncio
import html
import sys
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from streampace.server import StreampaceApp

HERE = Path(__file__).resolve().parent
CSP = ("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; "
       "connect-src 'self'; img-src 'self' data:")
WORDS = 90  # an answer: the prompt, then WORDS numbered words, one per DELAY_S
DELAY_S = 0.04


def answer_words(prompt: str) -> list[str]:
    return [f"Answer to {prompt}:"] + [f"word{i:02d}" for i in range(WORDS)]


async def agent(run: Any) -> Any:
    yield {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"}
    for word in answer_words(run.prompt):
        yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": word + " "}
        await asyncio.sleep(DELAY_S)
    yield {"type": "TEXT_MESSAGE_END", "messageId": "a1"}


streampace = StreampaceApp(agent, static=True)


def page(request: Request) -> Response:
    q = request.query_params
    lang = html.escape(q.get("lang", "en"))
    attrs = ""
    for name in ("remember", "labels"):
        if name in q:
            attrs += f' data-{name}="{html.escape(q[name])}"'
    body = f"""<!doctype html><html lang="{lang}"{' class="dark"' if q.get("dark") else ''}>
<meta charset="utf-8"><title>A host app</title>
<link rel="stylesheet" href="/host.css">
<link rel="stylesheet" href="/streampace/js_shim/streampace.css">
<h1>Host app</h1>
<div id="answer"></div>
<script type="module" src="/host.js"></script>
<script type="module" src="/streampace/js_shim/streampace.js" data-target="#answer"
        data-stream="/streampace/ws/sessions/new"{attrs}></script>
"""
    return HTMLResponse(body, headers={"Content-Security-Policy": CSP})


def asset(name: str, media: str) -> Any:
    def serve(request: Request) -> Response:
        return Response((HERE / name).read_bytes(), media_type=media,
                        headers={"Content-Security-Policy": CSP})
    return serve


app = Starlette(
    routes=[Route("/", page), Route("/host.js", asset("host.js", "text/javascript")),
            Route("/host.css", asset("host.css", "text/css")),
            Mount("/streampace", streampace)],
    lifespan=streampace.lifespan,
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
                **{k: v for k, v in streampace.uvicorn_options().items()
                   if k not in ("host", "port", "log_level")})
