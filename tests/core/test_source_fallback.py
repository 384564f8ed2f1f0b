"""client/fallback.py: the one rule for falling back to the in-page simulation."""

from __future__ import annotations

from streampace.client.fallback import SourceChoice, SourceState


def test_an_open_first_keeps_the_server_whatever_fails_later() -> None:
    choice = SourceChoice()
    assert choice.report("connecting", {}) is None
    assert choice.report("open", {}) is SourceState.SERVER
    assert choice.report("closed", {"wasOpen": True}) is None
    assert choice.report("closed", {"wasOpen": False}) is None  # a failed reconnect
    assert choice.state is SourceState.SERVER


def test_a_close_before_any_open_chooses_the_simulation_once() -> None:
    choice = SourceChoice()
    assert choice.report("waiting", {"attempt": 1}) is None
    assert choice.report("closed", {"wasOpen": False}) is SourceState.SIMULATION
    assert choice.report("closed", {}) is None
    assert choice.report("open", {}) is None  # the simulated socket's own open
    assert choice.state is SourceState.SIMULATION
