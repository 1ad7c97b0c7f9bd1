"""The references benchmark (``benchmarks/bench_references.py``) run small: its table has every
case, and what each case finds is right (the figures themselves are not checked: no timed
assertion)."""

from __future__ import annotations

from benchmarks import bench_references, targets


def test_the_benchmark_prints_each_case_with_what_it_found(capsys, monkeypatch):
    monkeypatch.delenv(targets.ENV, raising=False)
    assert bench_references.main(["--files", "300", "--repeat", "1"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split() == ["case", "lines", "files", "ms", "found"]
    found = [row.split("  ")[-1].strip() for row in rows[1:]]
    assert found == ["30 lines gone", "30 lines gone", "31 lines gone", "read all"]
    assert all(" 200 " in row and " 300 " in row for row in rows[1:4])
