"""Shell completions: the committed scripts are what `python -m kresched.completions` generates
today, and each shell, given its script, completes kresched's commands and option values."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kresched.cli import app
from kresched.completions import COMPLETE_VAR, SCRIPTS, completion_script, main

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "completions"
COMMANDS = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_the_app_has_the_commands_the_completion_tests_expect():
    assert {"plan", "preempt", "drain", "explain", "untaint", "reconcile", "snapshot", "manifests"} <= COMMANDS


def test_the_committed_scripts_are_current(tmp_path):
    assert main([str(tmp_path)]) == 0
    for name in SCRIPTS.values():
        fresh, committed = (tmp_path / name).read_text(), COMMITTED / name
        assert committed.exists(), f"completions/{name} is missing: run `python -m kresched.completions`"
        assert committed.read_text() == fresh, f"completions/{name} is stale: run `python -m kresched.completions`"
    assert sorted(p.name for p in COMMITTED.iterdir()) == sorted(SCRIPTS.values())


@pytest.mark.parametrize("shell", SCRIPTS)
def test_each_script_calls_kresched_back_with_the_protocol_for_its_shell(shell):
    script = completion_script(shell)
    assert f"{COMPLETE_VAR}=complete_{shell}" in script
    if shell == "zsh":
        assert script.startswith("#compdef kresched\n")  # compinit finds it in $fpath by this line


def test_an_unknown_shell_is_refused():
    with pytest.raises(ValueError, match="unsupported shell 'tcsh'"):
        completion_script("tcsh")


# -- the protocol, in-process ----------------------------------------------------------------------

@pytest.mark.parametrize(("shell", "env"), [
    ("bash", {"COMP_WORDS": "kresched ", "COMP_CWORD": "1"}),
    ("zsh", {"_TYPER_COMPLETE_ARGS": "kresched "}),
    ("fish", {"_TYPER_COMPLETE_ARGS": "kresched ", "_TYPER_COMPLETE_FISH_ACTION": "get-args"}),
])
def test_the_protocol_lists_every_command(shell, env):
    result = CliRunner().invoke(app, [], env={COMPLETE_VAR: f"complete_{shell}", **env}, prog_name="kresched")
    assert result.exit_code == 0, result.output
    for command in COMMANDS:
        assert command in result.output


# -- each shell, with the committed script ---------------------------------------------------------

@pytest.fixture
def kresched_on_path(tmp_path) -> dict[str, str]:
    """An environment whose PATH runs this source tree's kresched under this interpreter, as the
    installed console script would."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "kresched"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m kresched "$@"\n')
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("_KRESCHED") and k != "KUBECONFIG"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["HOME"] = str(tmp_path)
    return env


def run_shell(argv: list[str], env: dict[str, str]) -> list[str]:
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return [line.split("\t")[0] for line in done.stdout.splitlines() if line.strip()]


def bash_complete(words: list[str], env: dict[str, str]) -> list[str]:
    """What bash offers with the cursor at the end of `words` (the last one being typed)."""
    script = (f"source {shlex.quote(str(COMMITTED / 'kresched.bash'))}\n"
              f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n"
              'func=$(complete -p kresched | sed -E "s/.* -F ([^ ]+) .*/\\1/")\n'
              '"$func" kresched "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"\n'
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    return run_shell(["bash", "--norc", "--noprofile", "-c", script], env)


@pytest.mark.slow
def test_bash_completes_commands_and_option_values(kresched_on_path):
    assert set(bash_complete(["kresched", ""], kresched_on_path)) >= COMMANDS
    assert bash_complete(["kresched", "pre"], kresched_on_path) == ["preempt"]
    assert bash_complete(["kresched", "dr"], kresched_on_path) == ["drain"]
    assert bash_complete(["kresched", "plan", "-o", ""], kresched_on_path) == ["table", "wide", "json", "yaml"]
    assert "--allow-pdb-violation" in bash_complete(["kresched", "manifests", "--al"], kresched_on_path)


def zsh_complete(words: list[str], env: dict[str, str]) -> str:
    """The spec the zsh script hands to `_arguments` with the cursor at the end of `words` (compsys
    needs a terminal to run for real; stubbing `_arguments` and `compdef` runs the script's own
    code unchanged)."""
    script = ("compdef() { :; }\n"
              '_arguments() { print -r -- "$*"; }\n'
              f"source {shlex.quote(str(COMMITTED / '_kresched'))}\n"
              f"words=({' '.join(shlex.quote(w) for w in words)})\n"
              "CURRENT=${#words}\n"
              "_kresched_completion\n")
    return "\n".join(run_shell(["zsh", "-f", "-c", script], env))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_commands(kresched_on_path):
    spec = zsh_complete(["kresched", ""], kresched_on_path)
    for command in COMMANDS:
        assert f'"{command}":' in spec
    spec = zsh_complete(["kresched", "pre"], kresched_on_path)
    assert '"preempt":' in spec
    assert '"plan":' not in spec


def fish_complete(line: str, env: dict[str, str]) -> list[str]:
    script = f"source {shlex.quote(str(COMMITTED / 'kresched.fish'))}; complete -C {shlex.quote(line)}"
    return run_shell(["fish", "--no-config", "-c", script], env)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_commands_and_option_values(kresched_on_path):
    assert set(fish_complete("kresched ", kresched_on_path)) >= COMMANDS
    assert fish_complete("kresched pre", kresched_on_path) == ["preempt"]
    assert sorted(fish_complete("kresched plan -o ", kresched_on_path)) == ["json", "table", "wide", "yaml"]


# -- pod and node names, through each shell's script ---------------------------------------------------

@pytest.mark.slow
def test_bash_completes_pod_and_node_names_from_the_snapshot(kresched_on_path):
    assert bash_complete(["kresched", "drain", "--snapshot", "demo", "worker-c"], kresched_on_path) == [
        "worker-c1", "worker-c2"]
    assert bash_complete(["kresched", "explain", "-n", "ml", "--snapshot", "demo", "train"], kresched_on_path) == [
        "train-ranker-v7-95mf5"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completes_node_names_from_the_snapshot(kresched_on_path):
    spec = zsh_complete(["kresched", "drain", "--snapshot", "demo", "worker-c"], kresched_on_path)
    assert '"worker-c1"' in spec
    assert '"worker-a1"' not in spec


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_pod_names_from_the_snapshot(kresched_on_path):
    assert fish_complete("kresched plan -n ml --snapshot demo train", kresched_on_path) == ["train-ranker-v7-95mf5"]
