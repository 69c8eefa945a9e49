"""mypy as a ratchet: the count of errors per module may only go down.

mypy runs with the project's configuration (pyproject.toml [tool.mypy]); its errors are counted
per module and compared with tools/mypy_baseline.json. A module with more errors than its
baseline fails the check (exit 1), naming the module and printing its errors; a module with fewer
is reported so that ``--update`` can lower the baseline. ``--update`` only ever lowers counts
(a module that got worse still fails) and writes the new total into docs/developer.md, whose
figure tests/test_mypy_ratchet.py checks against the baseline.

    python tools/mypy_ratchet.py            # check (.ci/run lint, pre-commit)
    python tools/mypy_ratchet.py --update   # after fixing errors: record the lower counts
    python tools/mypy_ratchet.py --from-file out.txt   # compare a saved mypy output
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tools" / "mypy_baseline.json"
GUIDE = ROOT / "docs" / "developer.md"
# the figure in the developer guide: "mypy ratchet: **479** errors"
FIGURE = re.compile(r"(mypy ratchet:\s+\*\*)(\d+)(\*\*\s+errors)")
ERROR = re.compile(r"^(?P<path>[^:\s][^:]*\.pyi?):(?P<line>\d+):(?:\d+:)? error: (?P<msg>.*)$")


def module_of(path: str) -> str:
    """nerstudio/gui/main_window.py → nerstudio.gui.main_window; a package's __init__ → the package."""
    parts = Path(path.replace("\\", "/")).with_suffix("").parts
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def parse(output: str) -> dict[str, list[str]]:
    """mypy's error lines grouped by module (notes and the summary line are not errors)."""
    errors: dict[str, list[str]] = {}
    for line in output.splitlines():
        m = ERROR.match(line.strip())
        if m:
            errors.setdefault(module_of(m["path"]), []).append(line.strip())
    return errors


@dataclass
class Comparison:
    worse: list[tuple[str, int, int]]  # module, baseline, now
    better: list[tuple[str, int, int]]
    total: int
    baseline_total: int

    @property
    def ok(self) -> bool:
        return not self.worse


def compare(baseline: dict[str, int], counts: dict[str, int]) -> Comparison:
    worse, better = [], []
    for mod in sorted(set(baseline) | set(counts)):
        was, now = baseline.get(mod, 0), counts.get(mod, 0)
        if now > was:
            worse.append((mod, was, now))
        elif now < was:
            better.append((mod, was, now))
    return Comparison(worse, better, sum(counts.values()), sum(baseline.values()))


def lowered(baseline: dict[str, int], counts: dict[str, int]) -> dict[str, int]:
    """The baseline after --update: each module's count the lower of the two; none at zero."""
    out = {m: min(n, counts.get(m, 0)) for m, n in baseline.items()}
    return {m: n for m, n in sorted(out.items()) if n > 0}


def load_baseline(path: Path | None = None) -> dict[str, int]:
    data = json.loads((path or BASELINE).read_text(encoding="utf-8"))
    return {m: int(n) for m, n in data["modules"].items()}


def save_baseline(counts: dict[str, int], path: Path | None = None, tool: str = "mypy") -> None:
    data = {
        "about": f"{tool} errors per module, the most each may have (tools/{tool}_ratchet.py)",
        "total": sum(counts.values()),
        "modules": dict(sorted(counts.items())),
    }
    (path or BASELINE).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def guide_figure(text: str, figure: re.Pattern[str] = FIGURE) -> int | None:
    m = figure.search(text)
    return int(m[2]) if m else None


def set_guide_figure(text: str, total: int, figure: re.Pattern[str] = FIGURE) -> str:
    if not figure.search(text):
        raise SystemExit(f"{GUIDE}: no '{figure.pattern}' figure to update")
    return figure.sub(lambda m: f"{m[1]}{total}{m[3]}", text, count=1)


def run_mypy() -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if proc.returncode not in (0, 1) or "error: " in proc.stderr:  # 2: mypy itself failed
        raise SystemExit(f"mypy failed (exit {proc.returncode}):\n{proc.stderr}{proc.stdout}")
    return proc.stdout


def report(cmp: Comparison, errors: dict[str, list[str]], tool: str = "mypy") -> list[str]:
    lines = []
    for mod, was, now in cmp.worse:
        lines.append(f"{mod}: {now} {tool} errors, the baseline allows {was}:")
        lines.extend(f"    {e}" for e in errors.get(mod, []))
    for mod, was, now in cmp.better:
        lines.append(f"{mod}: {now} {tool} errors, fewer than the baseline's {was}")
    verdict = "FAILED" if cmp.worse else "ok"
    lines.append(f"{tool} ratchet {verdict}: {cmp.total} errors (baseline {cmp.baseline_total})")
    if cmp.better and not cmp.worse:
        lines.append(f"lower the baseline: python tools/{tool}_ratchet.py --update")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="lower the baseline to today's counts")
    ap.add_argument("--from-file", metavar="FILE", help="read mypy's output from FILE")
    args = ap.parse_args(argv)
    if args.from_file:
        output = Path(args.from_file).read_text(encoding="utf-8")
    else:
        output = run_mypy()
    errors = parse(output)
    counts = dict(Counter({m: len(e) for m, e in errors.items()}))
    baseline = load_baseline()
    cmp = compare(baseline, counts)
    print("\n".join(report(cmp, errors)))
    if cmp.worse:
        return 1
    if args.update:
        new = lowered(baseline, counts)
        save_baseline(new)
        GUIDE.write_text(
            set_guide_figure(GUIDE.read_text(encoding="utf-8"), sum(new.values())),
            encoding="utf-8",
        )
        print(f"baseline lowered to {sum(new.values())} errors ({BASELINE.name}, {GUIDE.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
