"""Where work runs: folds and other independent jobs in child processes or on a Dask cluster,
the jackknife that makes cross-validated N-best lists, the tagger and the reranker trained in a
process of their own, and a model folder's predictions.

The experiments (:mod:`nerstudio.experiments`), a training run (:mod:`nerstudio.runs`), the
document model (:mod:`nerstudio.app`) and the command line all run their work through here; none
of it knows which of them asked.
"""
