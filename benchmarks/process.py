"""Whole `kresched` processes against the floor of the same file: the issue's table.

    python -m benchmarks --processes                           # small and medium, 1/10/100/500 pending
    python -m benchmarks --processes --sizes large --pending 1,100

Owns the process cases and their table. Each case is one `python -m kresched ...` process as an
operator runs it (`-o json` to /dev/null), measured from outside by `os.wait4`: CPU (user + system,
what a loaded machine does not blur), wall, and peak resident memory; the best of `--repeat` runs,
taken round-robin (every case once a round). kresched is byte-compiled first, as an installed copy
is. The floor is a process that only reads the same file and decodes it into kresched's typed
structs with the GC off (`floor`, below), and leaves as kresched does, without freeing them; every
case is reported as a ratio to it, on the same file. kresched's pods compute some facts as they are
built (validation, requests, QoS: `Pod.__post_init__`), so that work is in the floor; the row after
it (`bare`) is the same decode without it, so a reader sees what share of the floor it is. The floor
copies the file into memory (`read_bytes`) as the issue's floor does; kresched maps a large file
instead, which costs less, so the row after that (`mapped`) is the floor's decode from the mapped
file: what the floor would be reading as kresched reads.

Cases: `plan --pod`, `explain --pod` (the first pending critical pod) and the drain pre-flight of
the busiest worker on the generated cluster; `plan --all-pending` on it (its own ~100 pending
pods); `plan -f` of a Deployment of 1,000 replicas (`benchmarks.whatif`); and `plan` (pending
critical pods only) on the variants with exactly N pending critical
pods, each needing evictions (`benchmarks.pending`), so that the growth with the queue shows.
"""

from __future__ import annotations

import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ProcessCase", "bare", "floor", "mapped", "measure_processes", "render_processes", "run_process"]

DEFAULT_PENDING = (1, 10, 100, 500)


@dataclass(frozen=True)
class ProcessCase:
    key: str
    title: str
    argv: list[str]  # after `python -m`
    path: Path  # the file it reads (its floor is that file's)
    env: tuple[tuple[str, str], ...] = ()  # set in its environment


def run_process(argv: list[str], env: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """Run `python -m ARGV...` once (with `env` set too): its CPU (user + system, and user alone)
    and wall seconds, peak RSS and exit code."""
    environ = {**os.environ, "PYTHONHASHSEED": "0", "NO_COLOR": "1", **dict(env)}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=environ)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    return {"cpu": usage.ru_utime + usage.ru_stime, "user": usage.ru_utime, "wall": wall,
            "peakMiB": usage.ru_maxrss / 1024, "rc": proc.returncode,
            "stderr": err.decode(errors="replace").strip().splitlines()[-1:]}


def floor(path: Path) -> object:
    """The floor process: read `path` and decode it into the typed structs, GC off. Nothing else."""
    import msgspec

    from kresched.sources.decode import _TypedList, paused_gc

    with paused_gc():
        return msgspec.json.Decoder(_TypedList).decode(path.read_bytes())


def bare(path: Path) -> object:
    """The floor's decode with the pods built as plain structs: kresched's `Pod` fields and
    options, without its `__post_init__` (the spec's validation, requests in integer units, QoS)."""
    from typing import Union, get_args

    import msgspec

    from kresched.model.objects import Pod
    from kresched.sources.decode import Known, paused_gc

    cfg = Pod.__struct_config__
    plain = msgspec.defstruct("Pod", [(f.name, f.type, f.default) for f in msgspec.structs.fields(Pod)],
                              frozen=cfg.frozen, dict=cfg.dict, rename="camel", omit_defaults=cfg.omit_defaults,
                              tag_field=cfg.tag_field, tag=cfg.tag)
    kinds = tuple(plain if t is Pod else t for t in get_args(Known))
    items = msgspec.defstruct("_BareList", [("kind", str, ""), ("items", list[Union[kinds]], [])])  # noqa: UP007
    with paused_gc():
        return msgspec.json.Decoder(items).decode(path.read_bytes())


def mapped(path: Path) -> object:
    """The floor's decode from the file mapped into memory instead of read into a copy, as kresched
    reads a file (`kresched.sources.snapshot._MAP_AT`): what the floor would cost reading as kresched does."""
    import mmap

    import msgspec

    from kresched.sources.decode import _TypedList, paused_gc

    with paused_gc(), path.open("rb") as f:
        return msgspec.json.Decoder(_TypedList).decode(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))


def _targets(path: Path) -> tuple[str, str]:
    """(the first pending critical pod as NS/NAME, the busiest untainted node), as the in-process
    cases pick them (`benchmarks.cases.setup`, `drain.preflight`)."""
    from kresched.sources.snapshot import load_snapshot

    state = load_snapshot(str(path))
    pending = state.pending_pods()
    pod = next((p for p in pending if p.is_critical), pending[0] if pending else None)
    if pod is None:
        raise ValueError(f"{path}: no pending pod")
    workers = [n for n in state.nodes if not n.taints]
    node = max(workers, key=lambda n: (len(state.pods_on(n.name)), n.name))
    return pod.key, node.name


def _first_claiming(path: Path) -> str:
    """The first pod of `path`'s queue (in the order it is planned) that has a claim, as NS/NAME."""
    from kresched.plan.queue import pending_pods_to_plan
    from kresched.sources.snapshot import load_snapshot

    pods = pending_pods_to_plan(load_snapshot(str(path)), all_pending=True)
    return next(p for p in pods if p.spec.resource_claims).key


def cases_for(directory: Path, size: str, pending: tuple[int, ...], log: Callable[[str], None]) -> list[ProcessCase]:
    from benchmarks.generate import ensure_cluster
    from benchmarks.pending import NATURAL_PENDING, ensure_natural, ensure_pending
    from benchmarks.queue import QUEUE_PENDING, ensure_queue
    from benchmarks.whatif import REPLICAS, ensure_whatif

    base = ensure_cluster(directory, size, log)
    pod, node = _targets(base)
    k = ["kresched"]
    snap = ["--snapshot", str(base), "-o", "json"]
    out = [
        ProcessCase("bare", "the floor without the pods' construction (validation, requests, QoS)",
                    ["benchmarks.process", "bare", str(base)], base),
        ProcessCase("mapped", "the floor with the file mapped into memory, not copied (as kresched reads it)",
                    ["benchmarks.process", "mapped", str(base)], base),
        ProcessCase("load", "kresched's load of the file (read, decode, cluster state), nothing else",
                    ["benchmarks.process", "load", str(base)], base),
        ProcessCase("plan.pod", "`plan --pod` (1 pending critical pod)", [*k, "plan", pod, *snap], base),
        ProcessCase("explain.pod", "`explain --pod` (the same pod)", [*k, "explain", pod, *snap], base),
        ProcessCase("drain.preflight", "`drain --dry-run`, the busiest node (pre-flight)",
                    [*k, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--force", "--dry-run",
                     *snap], base),
        ProcessCase("plan.all-pending", "`plan --all-pending` (the cluster's own pending pods)",
                    [*k, "plan", "--all-pending", *snap], base),
        ProcessCase("rebalance", "`rebalance --dry-run` (every objective, the whole cluster)",
                    [*k, "rebalance", "--dry-run", *snap], base),
    ]
    manifest = ensure_whatif(directory, log)
    out.append(ProcessCase("plan.whatif", f"`plan -f` (a what-if: a Deployment of {REPLICAS:,} replicas of one shape)",
                           [*k, "plan", "-f", str(manifest), *snap], base))
    natural = ensure_natural(directory, size, NATURAL_PENDING[size], log)
    out.append(ProcessCase("plan.all-pending.natural",
                           f"`plan --all-pending`, {NATURAL_PENDING[size]} more pending pods of ordinary workloads",
                           [*k, "plan", "--all-pending", "--snapshot", str(natural), "-o", "json"], natural))
    queue = ensure_queue(directory, size, log)
    first = _first_claiming(queue)
    qsnap = ["--snapshot", str(queue), "-o", "json"]
    # (A limit just above the file's size: half of it is less, so the file is decoded an item at a time.)
    just_above = (("KRESCHED_MAX_INPUT", str(queue.stat().st_size + (1 << 20))),)
    out += [ProcessCase("plan.queue.pod", "the GPU queue's file: `plan --pod` (its first pod with a claim)",
                        [*k, "plan", first, *qsnap], queue),
            ProcessCase("plan.queue.pod.by-item", "the same, the file decoded an item at a time (the input limit "
                        "just above its size)", [*k, "plan", first, *qsnap], queue, just_above),
            ProcessCase("plan.queue", f"the GPU queue's file: `plan --all-pending` ({QUEUE_PENDING[size]:,} pods "
                                      "of the cluster's own shapes)", [*k, "plan", "--all-pending", *qsnap], queue)]
    for n in pending:
        variant = ensure_pending(directory, size, n, log)
        out.append(ProcessCase(f"plan.pending.{n}", f"`plan`, {n} pending critical pod(s) needing evictions",
                               [*k, "plan", "--snapshot", str(variant), "-o", "json"], variant))
    return out


#: The fewest runs of a floor process: its CPU varies by a fifth from run to run on a VM (the
#: page faults of a fresh heap), and every ratio of its file divides by its best.
FLOOR_RUNS = 5


def measure_processes(directory: Path, sizes: list[str], pending: tuple[int, ...], repeat: int,
                      log: Callable[[str], None]) -> dict[str, Any]:
    """Every case on every size, `repeat` times each (the best run), with the floor of each file."""
    from benchmarks.generate import SIZES

    _compile_kresched()
    report: dict[str, Any] = {"repeat": repeat, "pending": list(pending), "sizes": {}}
    for size in sizes:
        spec = SIZES[size]
        entry: dict[str, Any] = {"nodes": spec.nodes, "pods": spec.pods, "floors": {}, "cases": {}}
        report["sizes"][size] = entry
        cases = _cases_apart(directory, size, pending)
        floors: dict[Path, list[dict[str, Any]]] = {path: [] for path in dict.fromkeys(c.path for c in cases)}
        runs: dict[str, list[dict[str, Any]]] = {c.key: [] for c in cases}
        # Round-robin: every floor and case once a round, rather than a case's runs one after
        # another. A VM's speed drifts over minutes (what a fresh page costs depends on what the
        # host reclaimed lately), and a ratio divides one case's best by another's: drawn from
        # the same rounds, both best runs come from the same stretch of the machine's time.
        rounds = max(repeat, FLOOR_RUNS)
        for i in range(rounds):
            for path, got in floors.items():
                log(f"{size}: floor of {path.name}, run {i + 1}/{rounds}")
                got.append(run_process(["benchmarks.process", "floor", str(path)]))
            for c in cases if i < repeat else ():
                log(f"{size}: {c.key} run {i + 1}/{repeat}")
                runs[c.key].append(run_process(c.argv, c.env))
        for path, got in floors.items():
            entry["floors"][path.name] = _best(got)
        for c in cases:
            result = _best(runs[c.key])
            result.update(title=c.title, file=c.path.name)
            entry["cases"][c.key] = result
    return report


def _cases_apart(directory: Path, size: str, pending: tuple[int, ...]) -> list[ProcessCase]:
    """`cases_for` in a process of its own (a fresh interpreter), so that the clusters it writes
    and loads are never in this one: a child's peak memory (`ru_maxrss`) counts its parent's
    resident memory at the fork, and would show a loaded cluster in every measured process."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(cases_for, (directory, size, pending, _log))


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _compile_kresched() -> None:
    """Byte-compile kresched first, as installing it does: a source checkout run with
    PYTHONDONTWRITEBYTECODE would otherwise compile every module in every measured process."""
    import compileall

    import kresched

    compileall.compile_dir(str(Path(kresched.__file__).parent), quiet=1)


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest of `runs` (CPU and wall each), and their medians: a process's system time (page
    faults of a fresh heap) varies by a third from run to run on a VM, which the best of a few runs
    leaves out, floors and cases alike. The user CPU alone (its best) is kresched's own work
    without the kernel's share, which varies most."""
    return {"cpu": min(r["cpu"] for r in runs), "user": min(r["user"] for r in runs),
            "wall": min(r["wall"] for r in runs),
            "cpuMedian": statistics.median(r["cpu"] for r in runs),
            "wallMedian": statistics.median(r["wall"] for r in runs),
            "peakMiB": max(r["peakMiB"] for r in runs), "rc": runs[-1]["rc"], "stderr": runs[-1]["stderr"]}


#: Exit codes that are a verdict, not a failure: 3 infeasible (e.g. a drain that would leave pods
#: Pending), 4 partially done.
_VERDICTS = {0, 3, 4}


def _count(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def render_processes(report: dict[str, Any]) -> str:
    """A Markdown table: one row per case, per size CPU and wall (× the file's floor; the CPU also
    as user time alone × the floor's user time) and peak."""
    sizes = report["sizes"]
    head = ["case"]
    for e in sizes.values():
        label = f"{_count(e['nodes'])}/{_count(e['pods'])}"
        head += [f"{label} CPU s (× floor)", f"{label} wall s (× floor)", f"{label} peak MiB"]
    rows = [head, ["---"] * len(head)]
    titles: dict[str, str] = {}
    for e in sizes.values():
        for key, c in e["cases"].items():
            titles.setdefault(key, c["title"])
    floor_row = ["floor: read + typed decode, GC off"]
    for e in sizes.values():
        base = next(iter(e["floors"].values()), None)
        floor_row += ["", "", ""] if base is None else \
            [f"{base['cpu']:.2f}" + (f" (user {base['user']:.2f})" if "user" in base else ""),
             f"{base['wall']:.2f}", f"{base['peakMiB']:,.0f}"]
    rows.append(floor_row)
    for key, title in titles.items():
        row = [title]
        for e in sizes.values():
            c = e["cases"].get(key)
            if c is None:
                row += ["", "", ""]
                continue
            if c["rc"] not in _VERDICTS:
                row += [f"failed (exit {c['rc']}: {' '.join(c['stderr'])})", "", ""]
                continue
            f = e["floors"][c["file"]]
            user = f"; user {c['user'] / f['user']:.1f}×" if "user" in c and f.get("user") else ""
            row += [f"{c['cpu']:.2f} ({c['cpu'] / f['cpu']:.1f}×{user})",
                    f"{c['wall']:.2f} ({c['wall'] / f['wall']:.1f}×)", f"{c['peakMiB']:,.0f}"]
        rows.append(row)
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def load(path: Path) -> object:
    """kresched's own load of `path` (read, decode, the cluster state), as every command starts."""
    from kresched.sources.snapshot import load_snapshot

    return load_snapshot(str(path))


if __name__ == "__main__":
    modes = {"floor": floor, "bare": bare, "mapped": mapped, "load": load}
    if len(sys.argv) != 3 or sys.argv[1] not in modes:
        sys.exit(f"usage: python -m benchmarks.process {'|'.join(modes)} PATH")
    loaded = modes[sys.argv[1]](Path(sys.argv[2]))
    # Both leave as a kresched command does (`cli._run`): without freeing what was loaded.
    os._exit(0)
