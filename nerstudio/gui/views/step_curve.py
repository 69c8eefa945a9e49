"""Teach's dev F curve, drawn into a matplotlib figure.

Why a module of its own: the step-through panel (:mod:`.stepper`) is about the steps; the curve
below them has its own rules, which the Train curves share in spirit (whole-number steps, the
same axis names) but not in code: before the first step it starts at 0 and shows a few whole
steps ahead, and its F axis stays a percentage around the values.
"""

from __future__ import annotations

UNIT_LABELS = {"round": "boosting round", "update": "perceptron update"}  # as the Train curves say
CURVE_MIN_STEPS = 5  # the curve's steps axis shows at least 0…5 (whole steps) from the start


def draw_history(fig, hist: list, unit: str) -> None:
    """The dev F curve: whole-number rounds or updates, the axis names the Train curves use.

    Before the first step (no point, or the one at step 0) matplotlib would centre the axes on
    that point with fractional ticks; the steps axis starts at 0 and shows a few whole steps
    ahead, the F axis stays a percentage around the values (0–100 with none)."""
    from matplotlib.ticker import MaxNLocator

    ax = fig.add_subplot(111)
    if hist:
        x, y = zip(*hist)
        # the point at step 0 sits on the axis: not clipped (the limits below hold every point)
        ax.plot(x, y, marker="o" if len(hist) < 200 else None, markersize=4, color="#4e79a7")
        ax.lines[-1].set_clip_on(False)
        lo, hi = min(y), max(y)
        pad = max(1.0, 0.1 * (hi - lo))
        ax.set_ylim(max(0.0, lo - pad), min(100.0, hi + pad))
        last = max(x)  # a little room after the newest point
        ax.set_xlim(0, max(CURVE_MIN_STEPS, last + max(1, last // 20)))
    else:
        ax.set_ylim(0, 100)
        ax.set_xlim(0, CURVE_MIN_STEPS)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(UNIT_LABELS.get(unit, unit))
    ax.set_ylabel("dev F (%)")
