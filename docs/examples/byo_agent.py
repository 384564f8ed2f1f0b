"""Bring your own agent: streampace in a Starlette app (run: python byo_agent.py)."""

import asyncio

from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Mount, Route
from streampace.server import StreampaceApp


async def echo_agent(run):  # run: streampace.server.mount.RunRequest
    """Any async iterator of AG-UI events; here the prompt comes back word by word.

    The same messageId every run, as many agents do: each run's message is a new one."""
    yield {"type": "TEXT_MESSAGE_START", "messageId": "a1", "role": "assistant"}
    for word in run.prompt.split():
        yield {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": word + " "}
        await asyncio.sleep(0.02)
    yield {"type": "TEXT_MESSAGE_END", "messageId": "a1"}


streampace = StreampaceApp(echo_agent, static=True)  # static: serve the tag and its runtime
PAGE = """<!doctype html><meta charset="utf-8"><title>My agent</title>
<link rel="stylesheet" href="/streampace/js_shim/streampace.css">
<div id="answer"></div>
<form id="ask"><input name="q" value="Hello from my own agent"><button>Ask</button></form>
<script type="module" src="/streampace/js_shim/streampace.js" data-target="#answer"></script>
<script type="module">
  // One conversation per visitor: `new` asks the server for a session whose id it
  // mints (the tag follows it on every reconnect).
  streampace.connect("/streampace/ws/sessions/new");
  document.getElementById("ask").onsubmit = (event) => {
    event.preventDefault();
    streampace.send({type: "run", prompt: event.target.q.value});
  };
</script>"""
app = Starlette(
    routes=[Route("/", lambda request: HTMLResponse(PAGE)), Mount("/streampace", streampace)],
    lifespan=streampace.lifespan,
)


if __name__ == "__main__":
    import uvicorn

    # streampace's guards below ASGI: control frames, compression, message sizes,
    # connection caps (docs/mount.md, "Running it under your own uvicorn").
    uvicorn.run(app, host="127.0.0.1", port=8000, **streampace.uvicorn_options())
