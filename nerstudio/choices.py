"""The named choices the core offers, as data: tasks, tag alphabets, perceptron variants, context
scopes, uncertainty measures, explain-model's comparisons and sorts, the K&T suite's systems and
the experiment's presets.

Each list is owned here and only here. The modules that act on a choice import its names from
this module (``tagging.maxent`` its tasks, ``tagging.tag_alphabets`` its alphabets, …), and the
command line's ``choices=`` and the window's menus read the same tuples. This module imports
nothing but the standard library, so that building the command line's parser (which every
command and ``--help`` does) or the window's panels does not load numpy, scipy or numba. The
learners themselves (rerankers, taggers, global-feature families) are rows of
:mod:`nerstudio.learners`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class Choice:
    """One named choice: its name (what the command line and the files say), the label the
    window shows and a tip saying what it means."""

    name: str
    label: str
    tip: str


def names(rows: tuple[Choice, ...]) -> tuple[str, ...]:
    return tuple(row.name for row in rows)


#: what the max-ent tagger labels: typed entities (the CoNLL types) or Collins' boundary-only task
TASKS = ("typed", "scn")

#: the tags a tagger predicts (its N-best lists are SCN either way)
ALPHABET_ROWS = (
    Choice("scn", "SCN", "Collins 2002: start, continue (the paper's tagger)"),
    Choice(
        "bilou",
        "BILOU",
        "Begin, inside, last, unit: the tagger also decides where an entity ends "
        "(the experiment's default on CoNLL-2003)",
    ),
)
ALPHABETS = names(ALPHABET_ROWS)

#: the structured perceptron tagger's update rules (Collins 2002a; Kazama & Torisawa 2007)
VARIANTS = ("perceptron", "averaged", "margin")

#: which of an entity's contexts the rerankers' DC / CC features see
SCOPES = ("both", "document", "corpus")

#: how unsure a tagger is about a sentence (``rank-uncertain --by``)
MEASURES = ("mass", "margin", "disagreement")

#: what explain-model compares the reranker's pick with, and how it ranks features
AGAINST = ("baseline", "runner-up")
SORTS = ("count", "contribution")

#: the Kazama & Torisawa suite's systems, in its report's order
KAZAMA_SYSTEMS = (
    "perceptron",
    "averaged",
    "margin",
    "candidate",
    "proposed",
    "reranking1",
    "reranking2",
)

#: named sets of the typed experiment's defaults. collins2002 is the paper's own setting: Collins'
#: feature set, 20-best lists from a 5-fold jackknife, boosting for 300,000 rounds with the round
#: picked on dev, the voted perceptron with its β and its number of passes picked on dev (§5:
#: "the development set picks the tunable parameters of each algorithm"; with a single pass it
#: reaches 9.7% relative error reduction on CoNLL-2003 against 15.0% with dev-chosen epochs),
#: and Collins & Duffy's kernel voted perceptron over the same lists.
PRESETS = MappingProxyType(
    {
        "collins2002": MappingProxyType(
            {
                "task": "scn",
                "tagger_features": "paper",
                "tagger_cutoff": 5,
                "tagger_optimizer": "lbfgs",
                "tagger_max_iter": 100,
                "tagger_l2": 1.0,
                "tagger_alphabet": "scn",
                "n": 20,
                "folds": 5,
                "systems": ("boost", "voted", "kernel"),
                "boost_rounds": 300000,
                "boost_epsilon": 0.0025,
                "epochs": 10,
                "reranker_gazetteers": False,
                "reranker_context": False,
                "reranker_clusters": False,
                "reranker_biglex": False,
                "reranker_posterior": False,
                "kernel_word_features": False,
                "kernel_global_features": False,
                "kernel_sentences": 3000,
            }
        ),
    }
)
