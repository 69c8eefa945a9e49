"""Adjudication (INCEpTION's curation): two or more annotators' files of one text merged into one.

The files must hold the same tokens, sentence by sentence; the first token that differs is an
error naming both lines (:func:`nerstudio.evaluation.check_aligned`, as for ``agreement``).

Each sentence's entities are grouped into **regions**: the entities of all annotators, joined
when they overlap (so "Paris Hilton"/PER against "Paris"/LOC is one region). A region is
**agreed** when every annotator has exactly the same entities in it — those go to the merged file
as they are. Every other region is a **disagreement**, with one *version* per annotator (possibly
no entity at all). A disagreement is decided by taking one annotator's version
(:meth:`Adjudication.take`), by editing the whole sentence by hand (:meth:`Adjudication.edit`),
or skipped (:meth:`Adjudication.skip`: it stays undecided); :meth:`Adjudication.resolve` decides
the rest by a policy — the majority version (held by more than half the annotators), or an
annotator preferred. Undecided regions put no entity in the merged file and are listed in the
report, never dropped silently.

The :class:`Report` gives the agreement before (span F1 and Cohen's kappa of every pair, from
:func:`nerstudio.agreement.agreement`), the regions, the decisions taken and how each annotator
compares with the merged result. No Qt: ``nerstudio adjudicate`` and the application share it,
and the report file (:func:`write_report`); the application's worker reads and aligns the files
(:func:`read_and_align`) and writes the merged file with its report (:func:`write_merged`).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from string import ascii_uppercase
from typing import TYPE_CHECKING, Any

from .agreement import agreement
from .corpus.model import Sentence, Span
from .errors import FormatError, SettingsError
from .evaluation import check_aligned

if TYPE_CHECKING:
    from .corpus.model import Corpus


@dataclass(frozen=True)
class Region:
    """Overlapping entities of sentence ``k`` (0-based) over tokens ``[start, end)``;
    ``versions[i]``: annotator i's entities there (sorted)."""

    k: int
    start: int
    end: int
    versions: tuple[tuple[Span, ...], ...]

    @property
    def agreed(self) -> bool:
        return all(v == self.versions[0] for v in self.versions)

    def holders(self) -> list[tuple[tuple[Span, ...], list[int]]]:
        """The distinct versions, each with the annotators who hold it (first come first)."""
        out: dict[tuple[Span, ...], list[int]] = {}
        for i, v in enumerate(self.versions):
            out.setdefault(v, []).append(i)
        return list(out.items())

    def majority(self) -> tuple[Span, ...] | None:
        """The version held by more than half the annotators, if one is."""
        v, who = max(self.holders(), key=lambda x: len(x[1]))
        return v if 2 * len(who) > len(self.versions) else None


@dataclass(frozen=True)
class Decision:
    """``kind``: ``take`` (annotator ``who``'s version), ``edit`` (by hand), ``skip``; ``by``:
    who decided (``user``, ``majority``, ``prefer``)."""

    kind: str
    who: int | None = None
    by: str = "user"


def aligned_sentences(corpora: Sequence[Sequence[Sentence]], paths: Sequence[str | None]) -> None:
    """Raise :class:`FormatError` unless every file has the first one's tokens, sentence by sentence."""
    first = corpora[0]
    for other, path in zip(corpora[1:], paths[1:]):
        for k, (sa, sb) in enumerate(zip(first, other), 1):
            check_aligned(sa, sb, k, paths[0], path)
        if len(other) != len(first):
            longer, lpath, opath = (
                (other, path, paths[0]) if len(other) > len(first) else (first, paths[0], path)
            )
            extra = longer[min(len(first), len(other))]
            raise FormatError(
                lpath,
                extra.line or None,
                f"has more sentences than {opath or 'the other file'} (which ends after "
                f"{min(len(first), len(other))})",
            )


def regions_of(k: int, versions: Sequence[Sequence[Span]]) -> list[Region]:
    """The regions of sentence ``k`` whose annotators' entities are ``versions``."""
    every = sorted({s for v in versions for s in v})
    groups: list[list[Span]] = []
    for s in every:  # sorted by start: a span joins the last group when it overlaps its extent
        if groups and s.start < max(x.end for x in groups[-1]):
            groups[-1].append(s)
        else:
            groups.append([s])
    out = []
    for g in groups:
        lo, hi = min(s.start for s in g), max(s.end for s in g)
        vs = tuple(tuple(sorted(s for s in v if lo <= s.start and s.end <= hi)) for v in versions)
        out.append(Region(k, lo, hi, vs))
    return out


class Adjudication:
    """The regions of aligned annotations and the decisions taken (see the module docstring)."""

    def __init__(
        self,
        corpora: Sequence[Sequence[Sentence]],
        names: Sequence[str],
        paths: Sequence[str | None] | None = None,
    ):
        if len(corpora) < 2:
            raise SettingsError("adjudication needs two or more annotations")
        paths = list(paths) if paths is not None else [None] * len(corpora)
        aligned_sentences(corpora, paths)
        self.names = list(names)
        self.paths = paths
        # per annotator: copies (later edits of the files' sentences stay out)
        self.sentences = [[s.copy() for s in c] for c in corpora]
        self.words = [s.words for s in self.sentences[0]]
        self.lines = [s.line for s in self.sentences[0]]
        self.regions: list[Region] = []
        self._by_k: dict[int, list[int]] = {}  # sentence → its regions
        for k in range(len(self.words)):
            rs = regions_of(k, [list(c[k].spans) for c in self.sentences])
            if rs:
                self._by_k[k] = list(range(len(self.regions), len(self.regions) + len(rs)))
                self.regions += rs
        self._before: list | None = None
        self.disagreements = [i for i, r in enumerate(self.regions) if not r.agreed]
        self.decisions: dict[int, Decision] = {}
        self.order: list[int] = []  # the regions in the order they were decided (the latest last)
        self.edited: dict[int, list[Span]] = {}  # sentence → its spans as edited by hand

    # -- deciding -------------------------------------------------------------------------
    def _check(self, i: int) -> Region:
        if i not in self.disagreements:
            raise ValueError(f"region {i} is not a disagreement")
        return self.regions[i]

    def take(self, i: int, who: int, by: str = "user") -> None:
        self._check(i)
        if not 0 <= who < len(self.names):
            raise ValueError(f"no annotator {who + 1}")
        self._decide(i, Decision("take", who, by))

    def skip(self, i: int) -> None:
        self._check(i)
        self._decide(i, Decision("skip"))

    def edit(self, k: int, spans: Sequence[Span]) -> None:
        """Sentence ``k``'s merged entities, edited by hand: its disagreements count as edited."""
        n = len(self.words[k])
        spans = sorted(Span(*s) for s in spans)
        for s in spans:
            if not 0 <= s.start < s.end <= n:
                raise ValueError(f"span {tuple(s)} outside sentence {k + 1}")
        self.edited[k] = spans
        for i in self._by_k.get(k, ()):
            if not self.regions[i].agreed:
                self._decide(i, Decision("edit"))

    def _decide(self, i: int, d: Decision) -> None:
        self.decisions[i] = d
        if i in self.order:
            self.order.remove(i)
        self.order.append(i)

    def snapshot(self) -> Adjudication:
        """A copy of the decisions of this moment (for a worker: later keys do not reach it)."""
        snap = copy.copy(self)
        snap.decisions, snap.order = dict(self.decisions), list(self.order)
        snap.edited = {k: list(v) for k, v in self.edited.items()}
        return snap

    def undecided(self) -> list[int]:
        return [
            i for i in self.disagreements if self.decisions.get(i, Decision("skip")).kind == "skip"
        ]

    def resolve(self, majority: bool = False, prefer: int | None = None) -> int:
        """Decide the undecided disagreements by the majority version and/or the preferred
        annotator's (majority first when both); returns how many were decided."""
        done = 0
        for i in self.undecided():
            r = self.regions[i]
            if r.k in self.edited:
                continue
            v = r.majority() if majority else None
            if v is not None:
                self._decide(i, Decision("take", r.versions.index(v), "majority"))
            elif prefer is not None:
                self._decide(i, Decision("take", prefer, "prefer"))
            else:
                continue
            done += 1
        return done

    # -- the result -----------------------------------------------------------------------
    def merged_spans(self, k: int) -> list[Span]:
        """Sentence ``k``'s merged entities: agreed regions, decided ones, or the hand edit."""
        if k in self.edited:
            return list(self.edited[k])
        out: list[Span] = []
        for i in self._by_k.get(k, ()):
            r = self.regions[i]
            if r.agreed:
                out += r.versions[0]
            else:
                d = self.decisions.get(i)
                if d is not None and d.kind == "take" and d.who is not None:
                    out += r.versions[d.who]
        return sorted(out)

    def merged(self) -> list[list[Span]]:
        return [
            self.merged_spans(k) if k in self._by_k or k in self.edited else []
            for k in range(len(self.words))
        ]

    def merged_sentences(self) -> list[Sentence]:
        """The first annotator's sentences with the merged entities (copies)."""
        return [s.copy(spans=sp) for s, sp in zip(self.sentences[0], self.merged())]

    def agreement_before(self) -> list[tuple[str, str, float, float | None]]:
        """(A, B, span F1 %, kappa) of every pair of annotators (computed once)."""
        if self._before is None:
            self._before = []
            for a in range(len(self.names)):
                for b in range(a + 1, len(self.names)):
                    ag = agreement(self.sentences[a], self.sentences[b])
                    self._before.append(
                        (self.names[a], self.names[b], ag.spans.overall.f1, ag.kappa)
                    )
        return self._before

    def report(self) -> Report:
        """The full report: with every disagreement and each annotator's F1 against the merged result."""
        pairs = self.agreement_before()
        merged = self.merged_sentences()
        vs_merged = [
            (n, agreement(merged, c).spans.overall.f1) for n, c in zip(self.names, self.sentences)
        ]
        counts, taken = self._counts()
        return Report(
            self.names,
            pairs,
            counts,
            taken,
            vs_merged,
            sum(len(s) for s in self.merged()),
            [self._row(i) for i in self.disagreements],
        )

    def summary(self, last: int = 10) -> str:
        """What the walk shows as it goes (cheap at every key): the agreement before, the regions,
        the decisions so far and the ``last`` ones taken."""
        rep = Report(
            self.names,
            self.agreement_before(),
            *self._counts(),
            [],
            -1,
            [self._row(i) for i in self.order[-last:][::-1]],
        )
        return rep.text(0).replace("disagreements:", "last decisions (the latest first):")

    def _counts(self) -> tuple[dict[str, int], dict[str, int]]:
        counts = {
            "agreed": len(self.regions) - len(self.disagreements),
            "disagreements": len(self.disagreements),
        }
        for kind in ("take", "edit"):
            counts[kind] = sum(1 for d in self.decisions.values() if d.kind == kind)
        counts["undecided"] = len(self.undecided())
        taken = {
            n: sum(1 for d in self.decisions.values() if d.kind == "take" and d.who == i)
            for i, n in enumerate(self.names)
        }
        return counts, taken

    def region_text(self, r: Region, version) -> str:
        words = self.words[r.k]
        return (
            ", ".join(f"[{' '.join(words[s.start : s.end])}]{s.label}" for s in version)
            or "(no entity)"
        )

    def _row(self, i: int) -> dict:
        r = self.regions[i]
        d = self.decisions.get(i, Decision("skip"))
        return {
            "sentence": r.k + 1,
            "line": self.lines[r.k] or None,
            "text": " ".join(self.words[r.k][r.start : r.end]),
            "versions": {n: self.region_text(r, v) for n, v in zip(self.names, r.versions)},
            "decision": (
                "undecided"
                if d.kind == "skip"
                else "edited by hand"
                if d.kind == "edit"
                else f"{self.names[d.who or 0]} ({d.by})"  # a "take" names who
                if d.by != "user"
                else self.names[d.who or 0]
            ),
            "merged": self.region_text(
                r, [s for s in self.merged_spans(r.k) if r.start <= s.start and s.end <= r.end]
            ),
        }


@dataclass
class Report:
    """Agreement before, the decisions taken, the annotators against the merged result."""

    names: list[str]
    pairs: list[tuple[str, str, float, float | None]]  # (A, B, span F1 %, kappa)
    counts: dict[str, int]
    taken: dict[str, int]
    vs_merged: list[tuple[str, float]]  # (annotator, span F1 % against the merged entities)
    entities: int  # in the merged result (-1: not counted)
    rows: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "annotators": self.names,
            "agreement_before": [
                {"a": a, "b": b, "f1": f, "kappa": k} for a, b, f, k in self.pairs
            ],
            "regions": self.counts,
            "taken": self.taken,
            "merged_entities": self.entities,
            "f1_against_merged": dict(self.vs_merged),
            "disagreements": self.rows,
        }

    def text(self, limit: int = 20) -> str:
        def k(v):
            return "n/a" if v is None else f"{v:.3f}"

        c = self.counts
        lines = [
            "agreement before: "
            + "; ".join(f"{a}–{b} span F1 {f:.2f}, kappa {k(kap)}" for a, b, f, kap in self.pairs),
            f"regions: {c['agreed'] + c['disagreements']} ({c['agreed']} agreed, accepted; "
            f"{c['disagreements']} disagreements)",
            "decisions: "
            + ", ".join(f"{n} taken {v}" for n, v in self.taken.items())
            + f", edited by hand {c['edit']}, undecided {c['undecided']} (no entity written)",
            *(
                [
                    f"merged: {self.entities} entities"
                    + ("; span F1 against it: " if self.vs_merged else "")
                    + ", ".join(f"{n} {f:.2f}" for n, f in self.vs_merged)
                ]
                if self.entities >= 0
                else []
            ),
        ]
        shown = self.rows if limit <= 0 else self.rows[:limit]
        if shown:
            lines.append(
                "disagreements"
                + (
                    f" (first {len(shown)} of {len(self.rows)})"
                    if len(shown) < len(self.rows)
                    else ""
                )
                + ":"
            )
        for r in shown:
            where = f"line {r['line']}" if r["line"] else f"sentence {r['sentence']}"
            lines.append(
                f"  [{where}] {r['text']}: "
                + "; ".join(f"{n} {v}" for n, v in r["versions"].items())
                + f" → {r['decision']}: {r['merged']}"
            )
        return "\n".join(lines)


def read_and_align(ctx: Any, paths: Sequence[str]) -> tuple[Adjudication, Corpus]:
    """Read the annotators' files ``paths`` (A, B, … in that order) and align them; returns the
    adjudication (its agreement before computed) and the first file's corpus, the merged
    file's layout. ``ctx`` is a job's context: ``check()`` between files, ``progress``."""
    from .corpus.formats import read_corpus

    corpora = []
    for n, p in enumerate(paths):
        ctx.check()
        ctx.progress(f"reading {os.path.basename(p)}", n, len(paths))
        corpora.append(read_corpus(p))
    names = list(ascii_uppercase[: len(paths)])
    ctx.progress("comparing the annotations", len(paths), len(paths))
    adj = Adjudication([c.sentences for c in corpora], names, list(paths))
    adj.agreement_before()  # here, not when the first decision is shown
    return adj, corpora[0]


def report_name(path: str) -> str:
    """The report's file beside the merged file: its whole name with ``.report.json`` added
    (``merged.conll`` → ``merged.conll.report.json``: merged files of two formats in one folder
    keep a report each)."""
    return path + ".report.json"


def write_report(
    path: str, rep: Report, names: Sequence[str], paths: Sequence[str | None], output: str
) -> None:
    """The report as JSON, written atomically: the figures, which file each annotator's is and
    the merged file."""
    from .corpus.atomic import atomic_open

    with atomic_open(path) as f:
        json.dump(
            {**rep.as_dict(), "files": dict(zip(names, paths)), "output": output},
            f,
            indent=2,
            ensure_ascii=False,
        )


def write_merged(
    ctx: Any, snapshot: Adjudication, base: Corpus, path: str, fmt: str, report_path: str
) -> Report:
    """Write ``base`` (the merged entities in the first file's corpus) to ``path`` as ``fmt``
    and the report of ``snapshot`` (the decisions of the moment Save was pressed) to
    ``report_path``, reporting both steps to ``ctx``. A file that cannot be written is a
    :class:`~nerstudio.errors.NerstudioError`."""
    from .corpus.writing import write_corpus
    from .errors import NerstudioError

    ctx.progress("writing the merged file", 0, 2)
    try:
        write_corpus(base, path, fmt)
        ctx.progress("the report", 1, 2)
        rep = snapshot.report()
        write_report(report_path, rep, snapshot.names, snapshot.paths, path)
    except OSError as exc:  # a format's own refusals are FormatErrors already; a bug propagates
        raise NerstudioError(str(exc)) from None
    return rep
