"""nerstudio: named-entity annotation and N-best reranking workbench.

The core (everything outside :mod:`nerstudio.gui`) is free of Qt so that it can be used from
the command line, from tests and from notebooks.
"""


def __getattr__(name: str):
    """``__version__``, read on first use (importlib.metadata costs a tenth of a second at
    start-up, before the window)."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:  # one source for the version: pyproject.toml, through the installed metadata
        value = version("nerstudio")
    except PackageNotFoundError:  # running from a checkout that was never installed
        value = "0+unknown"
    globals()["__version__"] = value
    return value


# The Python API (nerstudio.api), imported on first use so that `import nerstudio` stays cheap
# (the application's start-up imports this package).
def load(folder, system: str | None = None, n: int = 20):
    """A tagger and its reranker from a folder, as a pipeline: see :func:`nerstudio.api.load`."""
    from .api import load as _load

    return _load(folder, system=system, n=n)


def read(path, format: str | None = None, scheme: str | None = None, encoding: str | None = None):
    """A corpus file as a Corpus: see :func:`nerstudio.api.read`."""
    from .api import read as _read

    return _read(path, format, scheme, encoding)


def write(corpus, path, format: str | None = None, scheme: str | None = None) -> None:
    """Write a corpus atomically: see :func:`nerstudio.api.write`."""
    from .api import write as _write

    _write(corpus, path, format, scheme)


def suspects(
    corpus,
    *,
    more=(),
    folds: int = 5,
    model=None,
    n: int = 20,
    executor=None,
    progress=None,
    cancel=None,
    tagger_params: dict | None = None,
):
    """The sentences of ``corpus`` (a Corpus or a file) whose gold annotation is most likely
    wrong, most suspect first, as :class:`~nerstudio.label_errors.Suspect` (each with the model's
    suggested fix); ``more``: corpora or files added to every fold's training data; ``model``: a
    model folder, a tagger file or a loaded max-ent tagger to judge with instead of the folds.
    See :func:`nerstudio.api.suspects`."""
    from .api import suspects as _suspects

    return _suspects(
        corpus,
        more=more,
        folds=folds,
        model=model,
        n=n,
        executor=executor,
        progress=progress,
        cancel=cancel,
        tagger_params=tagger_params,
    )
