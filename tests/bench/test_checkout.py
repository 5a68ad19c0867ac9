"""The benchmark lives beside the package (benchmarks/, not installed): it runs from a checkout's root."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.__main__ import _run_case
from benchmarks.generate import ClusterSize, generate

ROOT = Path(__file__).resolve().parents[2]


def test_a_case_runs_in_its_own_process_from_a_checkouts_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "tiny.json"
    generate(ClusterSize("tiny", nodes=12, pods=400, pending=30, control_planes=1), path)
    monkeypatch.chdir(ROOT)
    result = _run_case("plan.pod", path)
    assert "error" not in result, result
    assert result["outcome"] in ("fits", "evict", "infeasible")


def test_the_benchmark_refuses_an_unknown_size_in_one_line_naming_it() -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--sizes", "huge"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == "python -m benchmarks: error: unknown size or case: huge"
    assert "Traceback" not in done.stderr
