"""pyright as a second ratchet: its errors per module may only go down, as mypy's do.

pyright (basic mode, pyproject.toml [tool.pyright]) reads the code differently from mypy: it
follows PySide6's stubs more closely and infers more in unannotated code, so each finds errors
the other misses. Its errors are counted per module and compared with
tools/pyright_baseline.json by the same rules as tools/mypy_ratchet.py (whose comparison this
uses): more errors than the baseline fails (exit 1), naming the module and printing its errors;
``--update`` only lowers the counts and writes the total into docs/developer.md.

An optional extra that is not installed (spaCy, Dask) is an unresolved import to pyright; those
are not counted, so the figure is the same with or without the extras.

    python tools/pyright_ratchet.py            # check (.ci/run lint)
    python tools/pyright_ratchet.py --update   # after fixing errors: record the lower counts
    python tools/pyright_ratchet.py --from-file out.json   # a saved `pyright --outputjson`
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import mypy_ratchet as shared

ROOT = shared.ROOT
BASELINE = ROOT / "tools" / "pyright_baseline.json"
GUIDE = shared.GUIDE
# the figure in the developer guide: "pyright ratchet: **196** errors"
FIGURE = re.compile(r"(pyright ratchet:\s+\*\*)(\d+)(\*\*\s+errors)")
# the optional extras (pyproject.toml): present or not, their imports do not count
OPTIONAL = ("spacy", "dask", "distributed")
UNRESOLVED = re.compile(r'^Import "(?P<module>[\w.]+)" could not be resolved')


def optional_import(diag: dict) -> bool:
    m = UNRESOLVED.match(diag.get("message", ""))
    return bool(m) and m["module"].split(".")[0] in OPTIONAL


def parse(output: str) -> dict[str, list[str]]:
    """pyright's errors (not warnings) grouped by module, each as ``path:line: message [rule]``."""
    data = json.loads(output)
    errors: dict[str, list[str]] = {}
    for d in data.get("generalDiagnostics", []):
        if d.get("severity") != "error" or optional_import(d):
            continue
        path = Path(d["file"])
        try:
            path = path.resolve().relative_to(ROOT)
        except ValueError:
            pass
        line = d.get("range", {}).get("start", {}).get("line", -1) + 1
        message = d.get("message", "").splitlines()[0] if d.get("message") else ""
        text = f"{path.as_posix()}:{line}: error: {message}  [{d.get('rule', '')}]"
        errors.setdefault(shared.module_of(path.as_posix()), []).append(text)
    return errors


def run_pyright() -> str:
    """pyright over [tool.pyright]'s files, resolving imports with this interpreter's packages."""
    proc = subprocess.run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", sys.executable],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode not in (0, 1):  # 2 and up: pyright itself failed (no node, bad config)
        raise SystemExit(f"pyright failed (exit {proc.returncode}):\n{proc.stderr}{proc.stdout}")
    return proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="lower the baseline to today's counts")
    ap.add_argument("--from-file", metavar="FILE", help="read pyright's JSON output from FILE")
    args = ap.parse_args(argv)
    output = Path(args.from_file).read_text(encoding="utf-8") if args.from_file else run_pyright()
    errors = parse(output)
    counts = dict(Counter({m: len(e) for m, e in errors.items()}))
    baseline = shared.load_baseline(BASELINE)
    cmp = shared.compare(baseline, counts)
    print("\n".join(shared.report(cmp, errors, tool="pyright")))
    if cmp.worse:
        return 1
    if args.update:
        new = shared.lowered(baseline, counts)
        shared.save_baseline(new, BASELINE, tool="pyright")
        text = GUIDE.read_text(encoding="utf-8")
        GUIDE.write_text(shared.set_guide_figure(text, sum(new.values()), FIGURE), "utf-8")
        print(f"baseline lowered to {sum(new.values())} errors ({BASELINE.name}, {GUIDE.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
