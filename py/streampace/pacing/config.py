"""`PacingConfig`: which pacing law runs, its knobs, and the seed's exits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .playout import AdaptiveLaw, Law, SeedLaw, UnpacedLaw

__all__ = ["LAWS", "PacingConfig"]

LAWS = ("adaptive", "seed", "off")


@dataclass(frozen=True)
class PacingConfig:
    """How text is paced.  The default law is adaptive playout
    (:mod:`streampace.pacing.playout`); :meth:`seed` is the seed's law exactly;
    :meth:`unpaced` (``law="off"``, reduced motion) shows everything queued on
    the next animation frame — still one commit per frame.

    ``max_lag_ms`` is the one knob of the adaptive law: the most any grapheme
    may wait after it arrived (outside stalls, which drain in bounded steps).
    None = automatic (the cushion follows the transport's own cadence and
    jitter).  Smaller: fresher text, less smoothing of the transport's batches.
    ``tau_ms`` and ``max_rate`` belong to the seed law only; ``min_rate`` is
    both laws' floor.  ``holdback_ms`` bounds how long the last cluster of a
    delta may wait for the code points that would complete it
    (:func:`streampace.pacing.graphemes.shows_incomplete`); 0 turns the
    cross-delta cluster handling off (the seed's per-event segmentation).
    """

    law: str = "adaptive"  # "adaptive" | "seed" | "off"
    max_lag_ms: float | None = None  # adaptive law's knob; None = automatic
    tau_ms: float = 250
    min_rate: float = 20  # graphemes/s
    max_rate: float = 800  # graphemes/s
    overload_graphemes: int = 4096
    max_events_per_frame: int = 512
    fallback_ms: float = 50
    holdback_ms: float = 250  # 0 disables cross-delta cluster holdback

    @classmethod
    def seed(cls, **overrides: Any) -> PacingConfig:
        """The seed's law (mosoo PR #450): ``clamp(pending / 250 ms, 20, 800)``,
        its constants, with our cross-delta cluster holdback on."""
        return cls(**{"law": "seed", **overrides})

    @classmethod
    def unpaced(cls, **overrides: Any) -> PacingConfig:
        """No animation (reduced motion): each frame shows all that is queued."""
        return cls(**{"law": "off", **overrides})

    def make_law(self) -> Law:
        if self.law == "seed":
            return SeedLaw(self.tau_ms, self.min_rate, self.max_rate)
        if self.law == "off":
            return UnpacedLaw()
        return AdaptiveLaw(self.max_lag_ms, self.min_rate)

    def __post_init__(self) -> None:
        if self.law not in LAWS:
            raise ValueError(f"law must be one of {', '.join(LAWS)}")
        if self.max_lag_ms is not None and not self.max_lag_ms > 0:
            raise ValueError("max_lag_ms must be > 0 (or None: automatic)")
        if not self.tau_ms > 0:
            raise ValueError("tau_ms must be > 0")
        if not 0 <= self.min_rate <= self.max_rate:
            raise ValueError("need 0 <= min_rate <= max_rate")
        if self.max_events_per_frame < 1:
            raise ValueError("max_events_per_frame must be >= 1")
        if self.overload_graphemes < 0 or self.fallback_ms < 0 or self.holdback_ms < 0:
            raise ValueError("overload_graphemes, fallback_ms and holdback_ms must be >= 0")
