"""Bring your own agent: streampace in a Starlette app (run: uvicorn byo_agent:app)."""

import asyncio

from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route
from streampace.server import StreampaceApp


async def echo_agent(run):  # run: streampace.server.mount.RunRequest
    """Any async iterator of AG-UI events; here the prompt comes back word by word."""
    yield {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"}
    for word in run.prompt.split():
        yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": word + " "}
        await asyncio.sleep(0.02)
    yield {"type": "TEXT_MESSAGE_END", "messageId": "a1"}


streampace = StreampaceApp(echo_agent, static=True)  # static: serve the tag and its runtime
PAGE = """<!doctype html><div id="answer"></div>
<form onsubmit="event.preventDefault(); streampace.send({type: 'run', prompt: this.q.value})">
  <input name="q" value="Hello from my own agent"><button>Ask</button></form>
<script type="module" src="/streampace/js_shim/streampace.js"
        data-stream="/streampace/ws/sessions/demo" data-target="#answer"></script>"""
app = Starlette(
    routes=[Route("/", lambda request: HTMLResponse(PAGE)), Mount("/streampace", streampace)],
    lifespan=streampace.lifespan,
)
