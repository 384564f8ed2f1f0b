"""streampace: backlog-paced display of streaming LLM output.

The modules directly under this package are sans-IO (no `js`, no sockets,
clocks and timers injected) so they run unchanged in CPython and Pyodide.
`streampace.browser` and `streampace.server` are the only I/O adapters.
"""


def __getattr__(name: str) -> str:
    # The version lives in pyproject.toml only; read from the installed
    # metadata on first use, so the browser's boot never imports importlib.metadata.
    if name == "__version__":
        from ._version import package_version

        return package_version()
    raise AttributeError(f"module 'streampace' has no attribute {name!r}")
