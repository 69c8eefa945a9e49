"""Training runs without a window: what a run is (:mod:`.spec`) and the stages it goes through
(:mod:`.training`). The window's worker thread calls them; so can any other front end."""
