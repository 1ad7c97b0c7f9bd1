"""Yak's test suite. A package so the tests and the benchmarks import their shared helpers as
``tests.support``."""
