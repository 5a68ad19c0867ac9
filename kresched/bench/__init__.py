"""The benchmark (`python -m kresched.bench`) and realistic generated clusters.

`kube` builds API objects shaped like `kubectl get -o json` output (shared with the demo cluster's
generator, scripts/make_demo.py); `generate` writes synthetic clusters of 100 to 5,000 nodes;
`cases` is the registry of what is measured; `__main__` runs and reports. Nothing here is imported
by the CLI or the planner.
"""
