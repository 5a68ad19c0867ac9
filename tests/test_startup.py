"""A snapshot run starts without the live path: no Kubernetes client, no urllib3, no HTTP stack.

Each command runs in a fresh interpreter (the test process has long since imported everything),
through the same entry point as the `kresched` script, and reports what it imported at exit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: Only the live path (`sources.live`, `execute.kube`) needs these.
LIVE_ONLY = ("kubernetes", "urllib3", "tenacity", "http.client", "ssl", "kresched.sources.live",
             "kresched.execute.kube")

_RUN = """
import json, sys
out, sys.argv = sys.argv[1], ["kresched", *sys.argv[2:]]
from kresched.cli import main
try:
    main()
except SystemExit:
    pass
with open(out, "w") as f:
    json.dump(sorted(sys.modules), f)
"""


@pytest.mark.parametrize("args", [
    ["plan", "--snapshot", "demo", "-o", "json"],
    ["explain", "metrics-server-5p9lfwkgvh-mkd72", "-n", "kube-system", "--snapshot", "demo", "-o", "json"],
    ["drain", "worker-b3", "--snapshot", "demo", "--ignore-daemonsets", "--dry-run", "-o", "json"],
    ["rebalance", "--snapshot", "demo", "--dry-run", "-o", "json"],
], ids=lambda a: a[0])
def test_a_snapshot_run_never_imports_the_kubernetes_client_or_the_http_stack(args: list[str],
                                                                              tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    run = subprocess.run([sys.executable, "-c", _RUN, str(out), *args], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip(), "the command printed nothing"
    modules = json.loads(out.read_text())
    loaded = [m for m in modules if any(m == name or m.startswith(name + ".") for name in LIVE_ONLY)]
    assert not loaded, f"kresched {' '.join(args)} imported {loaded[:10]}"
