"""Pacing (sans-IO): when queued text becomes visible, per animation frame.

- `scheduler` — `PacingScheduler`: one FIFO over all sessions, one batch per frame.
- `playout` — how many graphemes a frame may reveal (adaptive playout, the seed's law).
- `graphemes` — grapheme segmentation and which clusters may still grow.
- `coalescer` — the seed article's time-window coalescer.
"""
