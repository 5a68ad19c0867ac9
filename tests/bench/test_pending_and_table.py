"""The benchmark's pending-queue variants and its process table (no timing here: only what they contain)."""

from __future__ import annotations

from pathlib import Path

import msgspec

from benchmarks.generate import ClusterSize, generate
from benchmarks.pending import ensure_natural, natural_path, with_pending
from benchmarks.process import bare, floor, mapped, render_processes
from kresched.plan.queue import pending_pods_to_plan, plan_pending
from kresched.sources.snapshot import load_snapshot


def _tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.json"
    generate(ClusterSize("tiny", nodes=12, pods=400, pending=30, control_planes=1), path)
    return path


def test_a_pending_variant_has_exactly_n_critical_pods_needing_evictions_and_the_rest_unchanged(
        tmp_path: Path) -> None:
    base = _tiny(tmp_path)
    before = base.read_bytes()
    out = tmp_path / "tiny-pending5.json"
    removed = with_pending(base, 5, out, seed=7)
    assert base.read_bytes() == before, "the generated cluster itself is never rewritten"

    base_items = msgspec.json.decode(before)["items"]
    out_items = msgspec.json.decode(out.read_bytes())["items"]
    critical = [i for i in base_items if i["kind"] == "Pod" and not i["spec"].get("nodeName")
                and i["spec"].get("priority", 0) >= 2_000_000_000]
    assert removed == len(critical) >= 3
    kept = [i for i in base_items if i not in critical]
    assert out_items[:len(kept)] == kept, "every other object is copied as it was, in order"

    state = load_snapshot(str(out))
    queue = pending_pods_to_plan(state)
    assert len(queue) == 5
    assert len(state.pending_pods()) == len(load_snapshot(str(base)).pending_pods()) - removed + 5
    plans = plan_pending(state, queue)
    assert [p.outcome for p in plans].count("evict") >= 1
    assert all(p.outcome != "fits" for p in plans), "each needs evictions: none fits as the cluster stands"


def test_a_pending_variant_is_deterministic(tmp_path: Path) -> None:
    base = _tiny(tmp_path)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    with_pending(base, 3, a, seed=1)
    with_pending(base, 3, b, seed=1)
    assert a.read_bytes() == b.read_bytes()


def test_a_natural_variant_adds_n_pending_pods_of_several_outcomes_and_keeps_the_cluster(
        tmp_path: Path, monkeypatch) -> None:
    import benchmarks.pending as pending

    base = _tiny(tmp_path)
    monkeypatch.setattr(pending, "ensure_cluster", lambda directory, size, log: base)
    out = ensure_natural(tmp_path, "tiny", 25, lambda m: None)
    assert out == natural_path(tmp_path, "tiny", 25)
    before = load_snapshot(str(base))
    state = load_snapshot(str(out))
    added = [p for p in state.pending_pods() if p.namespace == "surge"]
    assert len(added) == 25
    assert len({p.key for p in added}) == 25
    assert len(state.pods) == len(before.pods) + 25
    assert all(p.controller is not None for p in added), "each has its ReplicaSet"
    outcomes = {p.outcome for p in plan_pending(state, pending_pods_to_plan(state, all_pending=True))
                if p.pod.namespace == "surge"}
    assert "infeasible" in outcomes, "the shape no node can hold"
    assert outcomes - {"infeasible"}, "and others that some node can (by evictions, or as it is)"


def test_the_process_table_gives_each_case_as_a_ratio_to_the_floor_of_its_own_file() -> None:
    def run(cpu: float, wall: float, rc: int = 0) -> dict:
        return {"cpu": cpu, "wall": wall, "peakMiB": 512.0, "rc": rc, "stderr": []}

    report = {"repeat": 1, "pending": [10], "sizes": {"medium": {
        "nodes": 1000, "pods": 30000,
        "floors": {"m.json": run(2.0, 2.5), "m-p10.json": run(4.0, 5.0)},
        "cases": {"plan.pod": {**run(3.0, 5.0), "title": "plan --pod", "file": "m.json"},
                  "plan.pending.10": {**run(8.0, 10.0), "title": "plan, 10", "file": "m-p10.json"},
                  "drain": {**run(1.0, 1.0, rc=1), "title": "drain", "file": "m.json"}}}}}
    lines = render_processes(report).splitlines()
    assert lines[0] == "| case | 1k/30k CPU s (× floor) | 1k/30k wall s (× floor) | 1k/30k peak MiB |"
    assert lines[2] == "| floor: read + typed decode, GC off | 2.00 | 2.50 | 512 |"
    assert lines[3] == "| plan --pod | 3.00 (1.5×) | 5.00 (2.0×) | 512 |"
    assert lines[4] == "| plan, 10 | 8.00 (2.0×) | 10.00 (2.0×) | 512 |"
    assert lines[5].startswith("| drain | failed (exit 1")


def test_the_process_table_gives_the_user_cpu_as_a_ratio_too_the_kernels_share_varies_most() -> None:
    def run(cpu: float, user: float) -> dict:
        return {"cpu": cpu, "user": user, "wall": cpu, "peakMiB": 512.0, "rc": 0, "stderr": []}

    report = {"repeat": 1, "pending": [], "sizes": {"large": {
        "nodes": 5000, "pods": 150000, "floors": {"l.json": run(9.0, 5.0)},
        "cases": {"plan.pod": {**run(13.5, 6.0), "title": "plan --pod", "file": "l.json"}}}}}
    lines = render_processes(report).splitlines()
    assert lines[2] == "| floor: read + typed decode, GC off | 9.00 (user 5.00) | 9.00 | 512 |"
    assert lines[3] == "| plan --pod | 13.50 (1.5×; user 1.2×) | 13.50 (1.5×) | 512 |"


def test_the_mapped_floor_decodes_the_same_objects_as_the_floor(tmp_path: Path) -> None:
    path = _tiny(tmp_path)
    typed, from_map = floor(path).items, mapped(path).items
    assert len(typed) > 300
    assert msgspec.json.encode(from_map) == msgspec.json.encode(typed)


def test_the_bare_floor_decodes_the_same_objects_without_the_pods_derived_facts(tmp_path: Path) -> None:
    path = _tiny(tmp_path)
    typed, plain = floor(path).items, bare(path).items
    assert [type(o).__name__ for o in plain] == [type(o).__name__ for o in typed]
    pods = [(t, p) for t, p in zip(typed, plain, strict=True) if type(t).__name__ == "Pod"]
    assert len(pods) > 300
    assert all(msgspec.json.encode(p) == msgspec.json.encode(t) for t, p in pods)  # every field, the same
    assert all("requests" in t.__dict__ and "requests" not in p.__dict__ for t, p in pods)
