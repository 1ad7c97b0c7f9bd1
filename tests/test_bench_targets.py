"""The benchmarks' summary of targets (benchmarks/targets.py): what the runner prints at the end."""

from __future__ import annotations

from benchmarks import targets


def test_every_recorded_target_is_in_one_summary_with_its_verdict(tmp_path, monkeypatch):
    """Targets recorded while the runner's file is named come back in order, and the summary
    says ok or MISSED for each and counts the misses."""
    record = tmp_path / "targets.jsonl"
    monkeypatch.setenv(targets.ENV, str(record))
    targets.target("UI loop, stream: max gap", "41.2 ms (p99 9.0 ms)", "<= 50 ms", True)
    targets.target("Settings list, on open", "312.9 ms", "< 300 ms", False)
    read = targets.read(record)
    assert [(r.name, r.met) for r in read] == [
        ("UI loop, stream: max gap", True),
        ("Settings list, on open", False),
    ]
    lines = targets.summary(read).splitlines()
    assert lines[1].startswith("UI loop, stream: max gap") and lines[1].endswith("  ok")
    assert "312.9 ms" in lines[2] and lines[2].endswith("  MISSED")
    assert lines[-1] == "2 targets: 1 ok, 1 MISSED"


def test_without_the_runner_nothing_is_written(tmp_path, monkeypatch):
    """A benchmark run alone (no file named) records nothing anywhere."""
    monkeypatch.delenv(targets.ENV, raising=False)
    assert targets.target("x", "1 ms", "< 2 ms", True).met
    assert targets.read(tmp_path / "none.jsonl") == []
    assert targets.summary([]) == "target  measured  goal  result\nno targets were recorded"
