"""Python side of the page's boot: what goes into the memory snapshot, and what
must be redone after restoring it.

`scripts/make_snapshot.mjs` calls `prepare_snapshot` and `compile_pyscript` (in
Node, at setup time); `js_shim/boot.js` calls `after_restore` in the page, and
js_shim/pyscript.js `install_pyscript_bytecode` on PyScript pages. Nothing here
touches `js`: the module is imported while the snapshot is made, outside any
browser.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import json
import marshal
import os
import pkgutil
import random
import sys
import time

__all__ = ["WARM_ANSWER", "after_restore", "compile_pyscript", "freeze_heap",
           "install_pyscript_bytecode", "prepare_snapshot", "snapshot_key", "warm_up"]

# Never imported into the snapshot: entry points that run on import, and the
# host-side I/O adapters (not shipped to the page at all).
_SKIP = ("streampace.__main__", "streampace.server.cli", "streampace.server")
# Page modules outside the package, at the archive's top level (scripts/setup_runtime
# PAGE_MODULES): the demo page's Python.
_EXTRA = ("streampace_demo",)

_snapshot_key: str | None = None
# PyScript's own Python package (pyscript/*.py, which PyScript writes into the
# working directory and imports before a page's first script), compiled at
# setup: relative path -> the bytes of a checked-hash .pyc.
_pyscript_pyc: dict[str, bytes] = {}


def _page_modules() -> list[str]:
    import streampace

    names = []
    for info in pkgutil.walk_packages(streampace.__path__, "streampace."):
        if any(info.name == s or info.name.startswith(s + ".") for s in _SKIP):
            continue
        names.append(info.name)
    names += [name for name in _EXTRA if importlib.util.find_spec(name) is not None]
    return sorted(names)


def prepare_snapshot(key: str) -> str:
    """Import every page module so the snapshot holds them compiled and
    initialised. A module that cannot be imported outside a page is skipped
    (the page imports it from the archive as usual). Returns a JSON
    report: {"imported": n, "skipped": {name: error}}."""
    global _snapshot_key
    imported = 0
    skipped: dict[str, str] = {}
    for name in _page_modules():
        try:
            importlib.import_module(name)
            imported += 1
        except Exception as exc:  # noqa: BLE001 - reported to setup, never fatal
            skipped[name] = f"{type(exc).__name__}: {exc}"
            sys.modules.pop(name, None)
    _snapshot_key = key
    # The page's interpreter is ours alone: markdown-it's per-rule DEBUG checks
    # (~90 logging calls per block parse of a short list) are dropped there.
    from streampace.markdown.parser import quiet_block_rule_logs

    quiet_block_rule_logs()
    warmed_ms = None
    try:
        t0 = time.perf_counter()
        warm_up()
        warmed_ms = round((time.perf_counter() - t0) * 1000.0, 1)
    except Exception as exc:  # noqa: BLE001 - a cold start is slower, never broken
        skipped["warm_up"] = f"{type(exc).__name__}: {exc}"
    return json.dumps({"imported": imported, "skipped": skipped, "warmed_ms": warmed_ms})


# An answer with every construct the page renders, for warm_up().
WARM_ANSWER = """# A heading

A paragraph with *emphasis*, **strong**, ~~struck~~, `code`, a [link](https://example.com/x),
a bare www.example.org, an entity &amp; and a note[^1]. Then plain words, more words.

- an item
- an item with **strong** text
  continued

1. first
2. second

> quoted *text*
> more

| left | right |
|:-----|------:|
| 1    | 2     |

```python
def f(x):
    return x * 2  # comment
```

Math $x^2 + 1$ inline, and a block:

$$
\\frac{a}{b}
$$

---

[^1]: The note.
"""


def warm_up() -> None:
    """Run the page's per-frame Python once over a sample answer, sans IO, so
    the snapshot holds it warm: the first use of a Markdown construct in a
    page otherwise costs a multiple of later ones (lazily built state,
    specialising interpreter: in CPython a first list parse 0.13 ms, later
    0.07), and a message's first frames are among the slowest. Every object
    made here is dropped; nothing that later frames read is left changed."""
    from streampace.browser.labels import labels_for
    from streampace.conversation.live_state import LiveState
    from streampace.conversation.view_plan import ViewPlanner
    from streampace.markdown.stream import MarkdownStream
    from streampace.reading.announcer import Announcer
    from streampace.reading.spoken import spoken_block

    answer = WARM_ANSWER
    for size in (3, 17, 64, len(answer)):  # small deltas, lines, the whole at once
        stream = MarkdownStream(id_prefix="warm-")
        announcer = Announcer(lambda: 0.0)
        said = 0
        for at in range(0, len(answer), size):
            stream.feed(answer[at:at + size])
            finals = [spoken_block(block) for block in stream.blocks[said:]]
            said = len(stream.blocks)
            announcer.update("m", finals,
                             "\n".join(spoken_block(n) for n in stream.tail_nodes), False)
        stream.close()
        announcer.take()
    state = LiveState()
    planner = ViewPlanner(labels=labels_for())
    events: list[dict] = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
                          {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": answer[at:at + 9]}
               for at in range(0, 90, 9)]
    events += [{"type": "TEXT_MESSAGE_END", "messageId": "m"},
               {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}]
    for event in events:
        planner.plan(state, state.apply([event]))


def snapshot_key() -> str | None:
    """The key the running snapshot was made with (None: not from a snapshot)."""
    return _snapshot_key


def freeze_heap() -> int:
    """Called last before the snapshot is taken: collect once, then move every
    object the collector tracks (the imported modules, their functions and
    classes, PyScript's compiled package: what lives as long as the page) into
    its permanent generation, which no later collection scans. Returns how
    many objects that is.

    Without it each page's collector kept scanning them: the steps that
    `collector.FrameCollector` runs between frames were mostly under 0.2 ms,
    but one in about nine scanned the old generation whole, 3-22 ms at 1x and
    35-155 ms at 4x CPU (`python -m bench.page_frames --trace md_32k`): a long
    animation frame of its own on a phone. Frozen objects are never freed; they
    are what the snapshot holds, which a page keeps anyway."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def after_restore() -> None:
    """Undo what the snapshot froze: every restore would otherwise replay the
    same random sequence, and the time zone would be the setup machine's.
    (String hash randomisation stays fixed by the snapshot; nothing of ours
    depends on it.)"""
    random.seed()  # from os.urandom, i.e. crypto.getRandomValues in the page
    # Pyodide puts "" in front of sys.path again after a restore.
    sys.path[:] = list(dict.fromkeys(sys.path))
    tzset = getattr(time, "tzset", None)
    if tzset is not None:
        tzset()


def compile_pyscript(files_json: str) -> int:
    """Compile PyScript's Python package ({relative path: source}, from the
    pinned @pyscript/core) into checked-hash .pyc bytes kept in this module, so
    they are in the snapshot. Returns how many."""
    from importlib.util import MAGIC_NUMBER, source_hash

    files = json.loads(files_json)  # from our own setup (make_snapshot.mjs), not outside input
    for rel, source in files.items():
        data = source.encode("utf-8")
        code = compile(data, rel, "exec", dont_inherit=True)
        # The .pyc layout (PEP 552): magic, flags (hash-based, check the source),
        # the source's hash, then the marshalled code.
        flags = (0b11).to_bytes(4, "little")
        _pyscript_pyc[rel] = MAGIC_NUMBER + flags + source_hash(data) + marshal.dumps(code)
    return len(_pyscript_pyc)


def install_pyscript_bytecode(cwd: str) -> int:
    """Write the .pyc files of PyScript's package where Python looks for them
    once PyScript has written its sources under `cwd`: importing it then skips
    the compiler (30-120 ms warm, 300 ms cold, measured). Python checks each
    .pyc against its source's hash, so a different PyScript compiles as usual.
    Returns how many were written."""
    from importlib.util import cache_from_source

    for rel, pyc in _pyscript_pyc.items():
        target = cache_from_source(os.path.join(cwd, rel))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(pyc)
    return len(_pyscript_pyc)
