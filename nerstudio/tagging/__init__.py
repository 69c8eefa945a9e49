"""Taggers that propose candidate segmentations (no Qt)."""
