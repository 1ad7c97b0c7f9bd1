"""Yak's benchmarks: speed targets measured against a baseline in the same run, never asserted.
Run them from the repository root with ``python -m benchmarks.run`` (see ``benchmarks/run.py``)."""
