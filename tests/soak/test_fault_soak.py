"""The fault soak (bench/soak.py), CI-sized: ~35 s of runs with dropped sockets,
bad client frames, malformed upstream runs and one SIGKILL + restart of the server.
The 10-minute version and its figures: `python -m bench.soak` (docs/server.md)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.soak import SoakConfig, run_soak


def test_short_fault_soak_loses_nothing(tmp_path: Path) -> None:
    result = run_soak(SoakConfig(duration_s=35, sessions=3, readers=2, speed=3.0,
                                 workdir=tmp_path))
    print(json.dumps(result, indent=1))  # the figures, in the test log
    assert result["mismatch_detail"] == []
    assert result["mismatches"] == 0
    assert result["viewer_transcripts_compared"] >= 2 * 3 * 3  # two checkpoints, all readers
    assert result["characters_compared"] > 50_000
    assert result["restarts_survived"] == 1
    assert result["drops_survived"] >= 5
    assert result["client_frames_sent"] >= 100 and result["bad_client_frames_sent"] >= 1
    assert result["malformed_upstream_runs"] >= 1
    assert result["runs_lost_to_the_restart"] >= 1  # the crash hit a run in progress
    assert result["duplicates_dropped"] == 0 and result["invalid_events_received"] == 0
    assert result["fresh_viewers_ok"] == result["fresh_viewers"] == 3
