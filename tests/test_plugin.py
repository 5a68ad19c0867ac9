"""kresched as a kubectl plugin: `pip install` puts `kubectl-kresched` on PATH, so `kubectl kresched
...` runs it; the krew manifest in the repository installs a wrapper whose archive it names by
sha256; the docs (docs/guide/ci-and-cluster.md) carry a k9s plugin snippet that runs
as written."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest
import yaml

import kresched

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "plugins" / "krew" / "kresched.yaml"
WRAPPER = ROOT / "plugins" / "krew" / "kubectl-kresched"


def _krew_archive():
    spec = importlib.util.spec_from_file_location("krew_archive", ROOT / "scripts" / "krew_archive.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_package_declares_the_kubectl_plugin_entry_point():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'kubectl-kresched = "kresched.cli:kubectl_main"' in pyproject
    assert '"kubectl_complete-kresched" = "kresched.cli:kubectl_complete_main"' in pyproject
    installed = {e.name: e.value for e in entry_points(group="console_scripts")}
    if "kresched" in installed:  # an installed checkout: the same entry points, as pip wrote them
        assert installed.get("kubectl-kresched") == "kresched.cli:kubectl_main"


def test_the_krew_manifest_names_this_version_and_the_wrappers_archive():
    doc = yaml.safe_load(MANIFEST.read_text())
    assert (doc["apiVersion"], doc["kind"], doc["metadata"]["name"]) == (
        "krew.googlecontainertools.github.com/v1alpha2", "Plugin", "kresched")
    spec = doc["spec"]
    assert spec["version"] == f"v{kresched.__version__}"
    assert len(spec["shortDescription"]) <= 50  # krew-index's limit
    [platform] = spec["platforms"]
    assert platform["bin"] == "kubectl-kresched"
    assert f"/v{kresched.__version__}/" in platform["uri"]
    assert platform["sha256"] == hashlib.sha256(_krew_archive().archive_bytes()).hexdigest(), (
        "the wrapper changed: put the sha256 `python scripts/krew_archive.py` prints into the manifest")


def _path_with_kresched(tmp_path: Path) -> dict[str, str]:
    """PATH with `kubectl-kresched` running this source tree under this interpreter, as pip's
    console script would, and nothing else of kresched's."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, entry in (("kubectl-kresched", "kubectl_main"), ("kubectl_complete-kresched", "kubectl_complete_main")):
        shim = bin_dir / name
        shim.write_text(f"#!/bin/sh\nexec {sys.executable} -c 'from kresched.cli import {entry}; {entry}()' "
                        '"$@"\n')
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "COLUMNS")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["HOME"] = str(tmp_path)
    return env


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_runs_kresched_as_a_plugin(tmp_path):
    env = _path_with_kresched(tmp_path)
    done = subprocess.run(["kubectl", "kresched", "plan", "--snapshot", "demo", "-o", "json"], env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["plans"][0]["node"] == "worker-c1"
    usage = subprocess.run(["kubectl", "kresched", "plna"], env=env, capture_output=True, text=True, timeout=120,
                           check=False)
    assert usage.returncode == 2
    assert usage.stderr == ("error: unknown command 'plna'; did you mean 'plan'? "
                            "(see 'kubectl kresched --help')\n")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kubectl_completes_the_plugins_commands_and_names(tmp_path):
    env = _path_with_kresched(tmp_path)

    def complete(*words: str) -> list[str]:
        done = subprocess.run(["kubectl", "__complete", "kresched", *words], env=env, capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    assert complete("pl") == ["plan", ":4"]
    assert complete("drain", "--snapshot", "demo", "worker-c") == ["worker-c1", "worker-c2", ":4"]


def test_kubectl_complete_answers_in_cobras_format(capsys):
    from kresched.cli import kubectl_complete_main

    kubectl_complete_main(["explain", "-n", "ml", "--snapshot", "demo", "train"])
    assert capsys.readouterr().out == "train-ranker-v7-95mf5\n:4\n"


@pytest.mark.slow
def test_the_krew_wrapper_runs_the_installed_kresched(tmp_path):
    env = _path_with_kresched(tmp_path)
    py_dir = tmp_path / "py"
    py_dir.mkdir()
    python3 = py_dir / "python3"  # this interpreter (a symlink would lose its virtualenv)
    python3.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python3.chmod(0o755)
    env["PATH"] = f"{py_dir}{os.pathsep}{env['PATH']}"
    done = subprocess.run(["sh", str(WRAPPER), "explain", "ml/train-ranker-v7-95mf5", "--snapshot", "demo",
                           "-o", "json"], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["schedulable"] is False


def test_the_docs_have_a_k9s_plugin_that_runs_kresched_through_kubectl():
    readme = (ROOT / "docs" / "guide" / "ci-and-cluster.md").read_text()
    [block] = [b for b in re.findall(r"```yaml\n(.*?)```", readme, flags=re.S) if "plugins:" in b]
    plugins = yaml.safe_load(block)["plugins"]
    assert plugins
    for name, plugin in plugins.items():
        assert plugin["command"] in ("kubectl", "sh"), name
        joined = " ".join(plugin["args"])
        assert "kresched" in joined, name
        assert plugin["scopes"], name
        assert plugin["shortCut"], name
        # k9s's variables for the selected row and the current context
        assert "$NAME" in joined or "$NAMESPACE" in joined, name
