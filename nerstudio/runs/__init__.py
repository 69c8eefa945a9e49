"""Training runs without a window: what a run is (:mod:`.spec`), the stages of a reranker run
(:mod:`.training`) and of a K&T tagger run (:mod:`.kazama`). The window's worker thread calls
them; so can any other front end."""
