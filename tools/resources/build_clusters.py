#!/usr/bin/env python3
"""Build nerstudio's word clusters and large-corpus lowercase lexicon (resources/clusters/).

    pip install -c constraints.txt -e ".[resources]"
    python tools/resources/build_clusters.py [--out resources/clusters] [--check]

Both come from one package pinned in constraints.txt, ``spacy-lookups-data`` (MIT, Explosion),
never from any corpus of ours, so no development or test text can leak into them. Its
``en_lexeme_cluster.json.gz`` maps 1,000,001 cased English word types to the Brown cluster
of spaCy's older English models, and ``en_lexeme_prob.json.gz`` gives the same types' unigram
log-probabilities. What is known of the data is in docs/clusters.md; the encoding, worked out
from the data itself (tests/resources/test_clusters.py checks it on the bundled file):

* the integer is the cluster's bit path read from the least significant bit: path bit i is
  ``(v >> i) & 1``, so the first decisions of the hierarchy are the low bits (``London`` 678 and
  ``Berlin`` 934 share their low 8 bits, their first 8 decisions);
* trailing zeros of a path are lost in the integer (``int(path[::-1], 2)``), so a path is
  restored as its set bits followed by the fewest zeros that keep it from being a prefix of
  another cluster's path; the restored 999 paths are then prefix-free and, with the all-zero
  path added, form a full binary tree with 1,000 leaves (the 1,000 clusters);
* 0 is both "not clustered" (809,872 types, most of them rare) and that all-zero leaf, which
  cannot be told apart: words with 0 are left out.

Output (byte for byte the same for the same package version; no dates):

``brown.txt``     one line per cluster, sorted by path: the path (``0``/``1``, first decision
                  first), a tab, the cluster's words separated by tabs, in the package's order
                  (most frequent first)
``lowercase.txt`` the lowercase lexicon, one word per line, sorted: alphabetic lower-case words
                  with log-probability at least ``LEXICON_MIN_LOGPROB`` that are more probable
                  than their capitalised form (Collins 2002's "seen more often in lower case
                  in a large corpus")
``clusters.json`` the package version, counts, the settings above and each file's sha256
``SOURCES.md``    licence and attribution
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata as md
import json
import sys
from pathlib import Path

from rebuild import build_main

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "resources" / "clusters"
PACKAGE = "spacy-lookups-data"
LEXICON_MIN_LOGPROB = -16.0


def _table(name: str) -> dict:
    import spacy_lookups_data

    path = Path(spacy_lookups_data.__file__).parent / "data" / name
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def restore_paths(values) -> dict[int, str]:
    """Integer → bit path (first decision first) for every non-zero value, trailing zeros
    restored as the module docstring says."""
    bits = {v: format(v, "b")[::-1] for v in set(values) if v}
    by_prefix: dict[str, list[str]] = {}
    for b in bits.values():
        for i in range(1, len(b)):
            by_prefix.setdefault(b[:i], []).append(b)
    out = {}
    for v, b in bits.items():
        zeros = 0
        for other in by_prefix.get(b, ()):  # paths that continue b: b, some zeros, then a 1
            rest = other[len(b) :]
            zeros = max(zeros, len(rest) - len(rest.lstrip("0")) + 1)
        out[v] = b + "0" * zeros
    return out


def build() -> tuple[list[str], list[str], dict]:
    clusters = _table("en_lexeme_cluster.json.gz")
    probs = _table("en_lexeme_prob.json.gz")
    paths = restore_paths(clusters.values())
    members: dict[str, list[str]] = {}
    for word, v in clusters.items():  # the package's order: most probable first
        if v and word and not any(c.isspace() for c in word):
            members.setdefault(paths[v], []).append(word)
    brown = ["\t".join([p] + ws) for p, ws in sorted(members.items())]
    lexicon = sorted(
        w
        for w, lp in probs.items()
        if lp >= LEXICON_MIN_LOGPROB
        and w.isalpha()
        and w.islower()
        and lp > probs.get(w.capitalize(), float("-inf"))
    )
    stats = {
        "types_in_package": len(clusters),
        "clustered_words": sum(len(ws) for ws in members.values()),
        "clusters": len(members),
        "lexicon_words": len(lexicon),
        "lexicon_min_logprob": LEXICON_MIN_LOGPROB,
        "max_path_length": max(map(len, members)),
    }
    return brown, lexicon, stats


def write(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    brown, lexicon, stats = build()
    files = {
        "brown.txt": "".join(line + "\n" for line in brown),
        "lowercase.txt": "".join(w + "\n" for w in lexicon),
    }
    manifest = {"package": PACKAGE, "version": md.version(PACKAGE), **stats, "sha256": {}}
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8", newline="\n")
        manifest["sha256"][name] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    (out / "clusters.json").write_text(
        json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    lines = [
        "# Sources, licences and attributions of the word clusters and the lowercase lexicon",
        "",
        "Written by `tools/resources/build_clusters.py` (do not edit by hand); derived from the",
        "package below at the version given; no corpus text of nerstudio's was used.",
        "",
        "| package | version | licence | attribution |",
        "|---|---|---|---|",
        f"| {PACKAGE} | {md.version(PACKAGE)} | MIT | Explosion (explosion.ai), spacy-lookups-data (PyPI): "
        "`en_lexeme_cluster.json.gz`, `en_lexeme_prob.json.gz` |",
        "",
        f"`brown.txt`: {stats['clustered_words']:,} words in {stats['clusters']} Brown clusters "
        "(bit paths restored from the package's integers, see the build script).",
        f"`lowercase.txt`: {stats['lexicon_words']:,} lower-case words more probable than their "
        f"capitalised form (log-probability at least {LEXICON_MIN_LOGPROB:g}).",
        "",
        "The MIT licence of the package (Copyright (c) 2019 ExplosionAI GmbH) applies to these",
        "files: permission is granted free of charge to use, copy, modify, merge, publish and",
        "distribute them, provided the copyright notice and the permission notice are included; they",
        'are provided "as is", without warranty of any kind. The full text is in `LICENSE-spacy-lookups-data`.',
        "",
    ]
    (out / "SOURCES.md").write_text("\n".join(lines), encoding="utf-8")
    lic = md.distribution(PACKAGE).read_text("LICENSE") or md.distribution(PACKAGE).read_text(
        "licenses/LICENSE"
    )
    (out / "LICENSE-spacy-lookups-data").write_text(lic, encoding="utf-8")


def main(argv=None) -> int:
    return build_main(
        write,
        OUT,
        __doc__.split("\n\n")[0],
        "the clusters and the lexicon are what the package gives",
        argv,
    )


if __name__ == "__main__":
    sys.exit(main())
