"""The benchmark (`python -m benchmarks`) and realistic generated clusters.

`kube` builds API objects shaped like `kubectl get -o json` output (shared with the demo cluster's
generator, scripts/make_demo.py); `generate` writes synthetic clusters of 100 to 5,000 nodes;
`cases` is the registry of what is measured; `__main__` runs and reports.

It lives beside the package, not in it: the wheel installs `kresched` only, so the benchmark runs
from a checkout's root (`python -m benchmarks`, its subprocesses from the same directory), against
the `kresched` found there. Nothing in `kresched` imports it (tests/arch holds that).
"""
