"""`python -m benchmarks`: how long loading (and, as they land, planning) takes on big clusters.

    python -m benchmarks                              # small and medium, 3 runs each
    python -m benchmarks --sizes large --repeat 1
    python -m benchmarks --json > bench.json
    python -m benchmarks --sizes medium --profile kresched.load
    python -m benchmarks --processes                  # whole processes vs the floor (the issue's table)
    python -m benchmarks --processes --pending 1,10,100,500 --repeat 1

Generates each cluster once into `--dir` (default ./bench-out, regenerated only if missing), then
runs every case of `benchmarks.cases` `--repeat` times, each run in a fresh subprocess, and
reports the median time and the peak resident memory of those processes. Targets from the
issue: kresched's load within 1.5x of the typed msgspec decode of the same file, and under 4 GiB
peak for `large`.

`--processes` measures whole `kresched` processes instead (CPU, wall, peak memory; the best of
`--repeat` runs), each against the floor process of the same file, with 1/10/100/500 pending
critical pods (`--pending`): see `benchmarks.process`. It prints a Markdown table (`--json`: the numbers).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.cases import CASES
from benchmarks.generate import SIZES, ensure_cluster

LOAD_RATIO_TARGET = 1.5
LARGE_PEAK_TARGET_MIB = 4 * 1024


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="small,medium", help=f"comma-separated, of {', '.join(SIZES)}")
    p.add_argument("--repeat", type=int, default=3, help="runs per case (median reported)")
    p.add_argument("--dir", type=Path, default=Path("bench-out"), help="where generated clusters are cached")
    p.add_argument("--cases", default="", help=f"comma-separated subset of: {', '.join(CASES)}")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--profile", metavar="CASE", help="instead of timing, cProfile CASE in-process on the first size")
    p.add_argument("--processes", action="store_true",
                   help="time whole kresched processes against the floor of the same file instead")
    p.add_argument("--pending", default="1,10,100,500", metavar="N,...",
                   help="with --processes: the numbers of pending critical pods to plan")
    args = p.parse_args(argv)
    args.sizes = [s for s in args.sizes.split(",") if s]
    unknown = [s for s in args.sizes if s not in SIZES]
    args.cases = [c for c in args.cases.split(",") if c] or list(CASES)
    unknown += [c for c in args.cases if c not in CASES]
    if args.profile and args.profile not in CASES:
        unknown.append(args.profile)
    if unknown or args.repeat < 1:
        p.error(f"unknown size or case: {', '.join(unknown)}" if unknown else "--repeat must be at least 1")
    try:
        args.pending = tuple(int(n) for n in args.pending.split(",") if n.strip())
    except ValueError:
        p.error(f"--pending: not a list of numbers: {args.pending}")
    if any(n < 1 for n in args.pending):
        p.error("--pending: each number must be at least 1")
    return args


def _run_case(name: str, path: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-m", "benchmarks.cases", name, str(path)],
                          capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        return {"error": f"exit {proc.returncode}: {tail}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    report: dict[str, Any] = {"repeat": args.repeat, "sizes": {}}
    smallest = min(args.sizes, key=lambda s: SIZES[s].pods)
    for size in args.sizes:
        path = ensure_cluster(args.dir, size, log)
        spec = SIZES[size]
        entry: dict[str, Any] = {"nodes": spec.nodes, "pods": spec.pods, "file": str(path),
                                 "bytes": path.stat().st_size, "cases": {}}
        report["sizes"][size] = entry
        for name in args.cases:
            c = CASES[name]
            if c.max_pods and (size != smallest or spec.pods > c.max_pods):
                continue
            runs = []
            for i in range(args.repeat):
                log(f"{size}: {name} run {i + 1}/{args.repeat}")
                r = _run_case(name, path)
                runs.append(r)
                if "seconds" not in r:
                    break
            entry["cases"][name] = _summary(c.title, runs)
        _verdicts(size, entry)
    return report


def _summary(title: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"title": title}
    ok = [r for r in runs if "seconds" in r]
    if not ok:
        out["unavailable"] = runs[-1].get("unavailable") or runs[-1].get("error")
        return out
    secs = [r["seconds"] for r in ok]
    out.update(seconds=secs, median=statistics.median(secs), min=min(secs),
               peakMiB=max(r["peakKiB"] for r in ok) / 1024, baseMiB=min(r["baseKiB"] for r in ok) / 1024)
    extra = {k: v for k, v in ok[-1].items() if k not in ("seconds", "peakKiB", "baseKiB")}
    if extra:
        out["extra"] = extra
    return out


def _verdicts(size: str, entry: dict[str, Any]) -> None:
    cases = entry["cases"]
    load, typed = cases.get("kresched.load", {}), cases.get("msgspec.typed", {})
    verdicts: dict[str, Any] = {}
    if "median" in load and "median" in typed:
        ratio = load["median"] / typed["median"]
        verdicts["loadVsTypedDecode"] = {"ratio": round(ratio, 3), "target": LOAD_RATIO_TARGET,
                                         "ok": ratio <= LOAD_RATIO_TARGET}
    if size == "large" and "peakMiB" in load:
        verdicts["largePeak"] = {"MiB": round(load["peakMiB"]), "target": LARGE_PEAK_TARGET_MIB,
                                 "ok": load["peakMiB"] < LARGE_PEAK_TARGET_MIB}
    entry["verdicts"] = verdicts


def render(report: dict[str, Any]) -> str:
    lines = [f"kresched benchmark: median of {report['repeat']} run(s), each in a fresh process; "
             "load cases include reading the file"]
    for size, e in report["sizes"].items():
        lines += ["", f"{size}: {e['nodes']:,} nodes, {e['pods']:,} pods, {e['bytes'] / 1e6:,.1f} MB ({e['file']})",
                  f"  {'case':<52} {'median s':>9} {'min s':>8} {'peak MiB':>9} {'x typed':>8}"]
        typed = e["cases"].get("msgspec.typed", {}).get("median")
        for c in e["cases"].values():
            if "median" not in c:
                lines.append(f"  {c['title']:<52} {'n/a':>9}   ({c['unavailable']})")
                continue
            ratio = f"{c['median'] / typed:.2f}" if typed else ""
            lines.append(f"  {c['title']:<52} {c['median']:>9.3f} {c['min']:>8.3f} {c['peakMiB']:>9,.0f} {ratio:>8}")
        for name, v in e.get("verdicts", {}).items():
            detail = f"{v['ratio']}x (target <= {v['target']}x)" if "ratio" in v else \
                f"{v['MiB']:,} MiB (target < {v['target']:,} MiB)"
            lines.append(f"  {'OK  ' if v['ok'] else 'MISS'} {name}: {detail}")
    return "\n".join(lines)


def profile(args: argparse.Namespace, log: Any) -> None:
    path = ensure_cluster(args.dir, args.sizes[0], log)
    # CPU time, not wall time: on a shared machine the wall clock counts other processes' turns.
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    CASES[args.profile].run(path)
    prof.disable()
    stats = pstats.Stats(prof, stream=sys.stdout).strip_dirs()
    for key in ("tottime", "cumulative"):
        print(f"--- {args.profile} on {args.sizes[0]}, by {key} ---")
        stats.sort_stats(key).print_stats(25)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.profile:
        profile(args, log)
        return 0
    if args.processes:
        from benchmarks.process import measure_processes, render_processes

        report = measure_processes(args.dir, args.sizes, args.pending, args.repeat, log)
        print(json.dumps(report, indent=2) if args.json else render_processes(report))
        return 0
    report = measure(args, log)
    print(json.dumps(report, indent=2) if args.json else render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
