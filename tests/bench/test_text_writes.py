"""bench.text_writes' figures: medians over rounds and the table."""

from __future__ import annotations

import pytest

from bench.text_writes import main, medians, table


def test_each_mode_takes_the_median_of_its_rounds() -> None:
    rounds = [{"append": (100.0, 200.0), "set data": (50.0, 300.0)},
              {"append": (140.0, 180.0), "set data": (70.0, 250.0)},
              {"append": (120.0, 400.0), "set data": (60.0, 260.0)}]
    assert medians(rounds) == {"append": (120.0, 200.0), "set data": (60.0, 260.0)}
    assert medians([]) == {}


def test_the_table_gives_the_write_the_layout_and_their_sum() -> None:
    lines = table({"append": (120.4, 200.2)}, rounds=3, writes=400)
    assert lines[0] == "One text write per animation frame, 400 writes, median of 3 rounds:"
    assert lines[-1] == "| append | 120 | 200 | 321 |"


def test_rounds_below_one_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--rounds", "0"])
    assert "at least 1" in capsys.readouterr().err


def test_caps_must_be_positive_whole_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    for caps in ("64,x", "0"):
        with pytest.raises(SystemExit):
            main(["--caps", caps])
    err = capsys.readouterr().err
    assert "whole numbers" in err and "each at least 1" in err
