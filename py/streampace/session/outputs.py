"""What the session engine asks its driver to do (streampace.session.engine).

Every input of ``SessionEngine`` returns a list of these, in the order the
driver must carry them out.  None of them does anything by itself: the server
(asyncio, WebSockets, a store) and the page's simulation (FrameHost timers, one
in-page socket) each map them onto their own I/O.

Viewers are whatever hashable object the driver uses for a connection (the
server's ``Viewer``, the page's in-page socket end); the engine only compares
and stores them.  The outputs that name a viewer are generic over its type, so a
driver's ``SessionEngine[ItsViewer]`` hands back ``Output[ItsViewer]`` and uses
``out.viewer`` as its own type, unchecked casts none.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .protocol import AttachMode

__all__ = ["Attach", "Deliver", "LogReplaced", "Emit", "RunEnded", "StartRun", "StopRun",
           "PublishCancel", "Reply", "Refusal", "Disconnect", "Output", "Viewer"]

Viewer = TypeVar("Viewer", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Attach(Generic[Viewer]):
    """``viewer`` is attached: send ``text`` (the ``attached`` message) first, then
    deliver from seq ``after`` on — by replaying the log from there, or, when
    ``snapshot`` is set, by sending it (in bounded parts, session/snapshot.py, all with
    ``through = after``) and then the log from ``after`` on."""

    viewer: Viewer
    text: str
    mode: AttachMode
    after: int
    snapshot: list[dict[str, Any]] | None = None


@dataclass(frozen=True, slots=True)
class Deliver:
    """``events`` were logged as seqs ``first``..``through``: fan them out to the
    attached viewers (each through its delivery buffer)."""

    events: list[dict[str, Any]]
    first: int
    through: int


@dataclass(frozen=True, slots=True)
class LogReplaced:
    """The store reloaded the log (a gap in a shared stream): viewers that followed
    the old one must not take the new one's events as continuing it."""


@dataclass(frozen=True, slots=True)
class Emit:
    """Run ``run_id`` produced ``events`` for the log: write them to the session's
    store, which logs them (``SessionEngine.append``) at once or once it has them."""

    run_id: str
    events: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class RunEnded:
    """Run ``run_id``'s ending is emitted (after the Emits before this): release what
    the store holds for it, then call ``SessionEngine.settle_run``."""

    run_id: str


@dataclass(frozen=True, slots=True)
class StartRun:
    """Run ``run_id`` was accepted: take the right to run it (a store's lease), then
    call ``begin_run`` — or ``run_refused`` if the store refuses it."""

    run_id: str


@dataclass(frozen=True, slots=True)
class StopRun:
    """Stop run ``run_id``'s body now (cancel its task); its ending follows through
    ``end_run``."""

    run_id: str


@dataclass(frozen=True, slots=True)
class PublishCancel:
    """The log shows a run this engine does not run (another process owns it):
    ask its owner to stop it."""

    code: str
    message: str


@dataclass(frozen=True, slots=True)
class Reply(Generic[Viewer]):
    """Send ``text`` (an ``error`` message) to ``viewer``."""

    viewer: Viewer
    text: str


@dataclass(frozen=True, slots=True)
class Refusal(Generic[Viewer]):
    """``viewer``'s message was refused with ``code``: send ``text``.  Refusals count
    toward a driver's abuse limit; a ``Reply`` does not."""

    viewer: Viewer
    code: str
    text: str


@dataclass(frozen=True, slots=True)
class Disconnect(Generic[Viewer]):
    """Close ``viewer``'s connection: the session it is bound to is gone (evicted),
    and it must reconnect to reach the one that replaced it — never keep running
    against a second copy."""

    viewer: Viewer
    reason: str
    drain: bool = False  # send what was queued for it first (a notice it must read)


# Generic in the viewer type: ``Output[V]``.
Output = (Attach[Viewer] | Deliver | LogReplaced | Emit | RunEnded | StartRun | StopRun
          | PublishCancel | Reply[Viewer] | Refusal[Viewer] | Disconnect[Viewer])
