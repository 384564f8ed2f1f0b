"""Browser adapter: the only package that touches `js` / `pyodide.ffi`.

Only `ffi` imports them, and only in the page; every module imports anywhere,
and what needs the page (`host`, `renderer`, `embed`, …) raises
`ffi.BrowserOnly` when used outside it.  `client` is pure and also run on the
host.  The demo page's own Python is demo/demo.py.
"""
