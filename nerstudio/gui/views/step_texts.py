"""What Teach says before it has stepped: its introduction to each algorithm and its hint when
there is nothing to step through.

Why a module of its own: these are an instructor's texts, read and edited as prose, apart from
the panel's layout and behaviour (:mod:`.stepper`).
"""

from __future__ import annotations

NO_DATA = (
    "Open an N-best list with gold (the demo has one) to step through training: File ▸ Open N-best "
    "list…"
)

INTRO = {
    "boost": (
        "<h3>Boosting, one round at a time</h3>"
        "<p>Each press of <b>Step</b> (<b>F10</b>) does one round of the boosting reranker (Collins 2002): it picks "
        "the one feature whose weight change lowers the exponential loss most, and changes that weight by δ.</p>"
        "<p>After the step this space shows the pair of candidates the round moved most side by side — "
        "the better one (the oracle, with the most correct tags) and a worse one — with the chosen "
        "feature's value on each and their scores before and after, and below it lists every pair the "
        "round affected with both candidates and their margins before and after (a margin above 0 means "
        "the reranker ranks the better candidate first). The line above names the feature, δ, W+ and W− "
        "and the loss before and after; the curve below grows one dev-F point per round.</p>"
        "<p><b>Run</b> plays rounds continuously at the speed of the slider; <b>Reset</b> starts over. "
        "ε smooths δ when a feature is seen on one side only.</p>"
    ),
    "perceptron": (
        "<h3>The perceptron, one update at a time</h3>"
        "<p>Each press of <b>Step</b> (<b>F10</b>) goes through training sentences until the reranker's top "
        "candidate is not the oracle (the candidate with the most correct tags), then updates the weights: the "
        "oracle's features go up, the wrong top candidate's go down.</p>"
        "<p>After the step this space shows the wrong top candidate and the oracle side by side with the "
        "features that moved, and lists that sentence's candidates — those two first, in bold — with "
        "their scores before and after the update; the line above says how many mistakes this epoch has "
        "had. The curve below grows one dev-F point per update. β weighs the tagger's own score L(x).</p>"
        "<p><b>Run</b> plays updates continuously; <b>Reset</b> starts over.</p>"
    ),
}
