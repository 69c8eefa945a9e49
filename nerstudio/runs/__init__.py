"""The run service: training runs without a window. What a run is (:mod:`.spec`), the stages
every front end shares (:mod:`.stages`), the window's reranker run (:mod:`.training`),
``nerstudio experiment`` (:mod:`.experiment`), its Kazama & Torisawa suite
(:mod:`.kazama_suite`, :mod:`.kazama_scores`) and a K&T tagger run (:mod:`.kazama`). The
window's worker thread and the command line call them; so can any other front end."""
