"""streampace: backlog-paced display of streaming LLM output.

The modules directly under this package are sans-IO (no `js`, no sockets,
clocks and timers injected) so they run unchanged in CPython and Pyodide.
`streampace.browser` and `streampace.server` are the only I/O adapters.
"""

__version__ = "0.1.0"
