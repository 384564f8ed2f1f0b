"""Pacing (sans-IO): when queued text becomes visible, per animation frame.

- `scheduler` — `PacingScheduler`: one FIFO over all sessions, one batch per frame.
- `config` — `PacingConfig`: the law (adaptive, the seed's, off) and its knobs.
- `queue` — `PacedQueue`: the FIFO, grapheme slicing, the cross-delta cluster hold.
- `drive` — the drive machine: which frame/timer is armed, one table.
- `playout` — how many graphemes a frame may reveal (adaptive playout, the seed's law).
- `graphemes` — grapheme segmentation and the hold rule (`shows_incomplete`).
- `coalescer` — the seed article's time-window coalescer (`StreamCoalescer`).
"""
