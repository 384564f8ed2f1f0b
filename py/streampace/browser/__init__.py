"""Browser adapter: the only package that touches `js` / `pyodide.ffi`.

Importing this package is safe anywhere; its modules (`host`, `segmenter`,
`renderer`, `embed`) need Pyodide.  `client` is pure
and also run on the host.  The demo page's own Python is demo/demo.py.
"""
