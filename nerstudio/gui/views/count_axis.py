"""An x axis that counts — boosting rounds, epochs, perceptron updates — in whole numbers.

Matplotlib's integer tick locator gives up on a range shorter than one step, and a curve of one
point (round 0 before the first step, a run's first epoch) has a range of zero, which matplotlib
widens by ±5 %: the axis then read −0.045 … 0.045 "boosting rounds". Here such an axis spans
the point and the next count instead.
"""

from __future__ import annotations

from collections.abc import Sequence


def count_axis(ax, xs: Sequence[float]) -> None:
    """Whole-number ticks on ``ax``'s x axis, whose curves have the x values ``xs``."""
    from matplotlib.ticker import MaxNLocator  # in the render thread, not at start-up

    ax.xaxis.set_major_locator(MaxNLocator(nbins="auto", integer=True))
    if len(xs) and max(xs) - min(xs) < 1:
        x0 = min(xs)
        ax.set_xlim(x0 - 0.05, x0 + 1.05)
