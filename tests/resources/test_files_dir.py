"""The data files live in the source tree's top-level ``resources/`` folder and are read from
there through the package ``nerstudio.resources.files`` (setup.py maps it; the wheel step of
``.ci/run`` checks that an installed wheel carries them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nerstudio
from nerstudio.resources import FILES_DIR, LISTS_DIR
from nerstudio.resources.clusters import CLUSTERS_DIR
from nerstudio.resources.desktop import DESKTOP_FILE, ICON_SVG

ROOT = Path(__file__).resolve().parents[2]


def test_the_files_are_the_top_level_folder_in_a_checkout():
    if Path(nerstudio.__file__).resolve().parent != ROOT / "nerstudio":
        import pytest

        pytest.skip("nerstudio is not imported from this checkout")
    assert FILES_DIR == ROOT / "resources"
    spec = importlib.util.find_spec("nerstudio.resources.files")
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).resolve() == ROOT / "resources" / "__init__.py"


def test_every_kind_of_file_is_there():
    assert (LISTS_DIR / "lists.json").is_file() and (LISTS_DIR / "SOURCES.md").is_file()
    assert (CLUSTERS_DIR / "clusters.json").is_file()
    assert ICON_SVG.is_file() and DESKTOP_FILE.is_file()
    # the data folder holds no code: only the docstring that makes it a package
    assert [p.relative_to(FILES_DIR) for p in FILES_DIR.rglob("*.py")] == [Path("__init__.py")]
