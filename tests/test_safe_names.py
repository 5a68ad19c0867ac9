"""Names come from the cluster (or from a file someone attached to a ticket): control characters
and ANSI escapes in them are shown escaped in tables and messages, never sent to the terminal."""

from __future__ import annotations

import json

from kresched.cli.common import escape_control
from kresched.errors import ExitCode
from tests.builders import make_node, make_pod, make_state
from tests.clirun import run_cli

EVIL_POD = "web\x1b]0;pwned\x07"
EVIL_NODE = "node\x1b[2J\x9b31m"


def write_state(tmp_path) -> str:
    from kresched.sources.snapshot import encode_snapshot

    state = make_state([make_node(EVIL_NODE, cpu="1")],
                       [make_pod(EVIL_POD, "shop", cpu="2", priority=2_000_000_000, priority_class="")])
    path = tmp_path / "evil.json"
    path.write_bytes(encode_snapshot(state))
    return str(path)


def test_escape_control_shows_every_control_character_and_keeps_text_as_it_is():
    assert escape_control("plain name-1.x") == "plain name-1.x"
    assert escape_control("a\x1b]0;t\x07b\rc\x9bd\u202ee\x7f") == "a\\x1b]0;t\\x07b\\x0dc\\x9bd\\u202ee\\x7f"
    assert escape_control("line\n\tnext") == "line\n\tnext"  # layout, not content


def test_a_plan_table_escapes_names_from_the_snapshot(monkeypatch, tmp_path):
    result = run_cli(monkeypatch, "plan", "--snapshot", write_state(tmp_path))
    assert result.exit_code == ExitCode.INFEASIBLE, result.stderr
    assert "web\\x1b]0;pwned\\x07" in result.stdout
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout
    assert "\x9b" not in result.stdout


def test_an_error_line_escapes_the_name_it_quotes(monkeypatch, tmp_path):
    result = run_cli(monkeypatch, "plan", "--snapshot", write_state(tmp_path), "--pod", "shop/other\x1b]0;x\x07")
    assert result.exit_code == ExitCode.USAGE
    [line] = result.stderr.splitlines()
    assert line.startswith("error: pod shop/other\\x1b]0;x\\x07 not found in ")
    assert "\x1b" not in result.stderr


def test_json_output_keeps_the_exact_name_json_escaped(monkeypatch, tmp_path):
    result = run_cli(monkeypatch, "plan", "--snapshot", write_state(tmp_path), "-o", "json")
    assert "\x1b" not in result.stdout
    assert json.loads(result.stdout)["plans"][0]["pod"] == f"shop/{EVIL_POD}"


def test_plan_refuses_an_empty_pod_instead_of_planning_every_pending_pod(monkeypatch, tmp_path):
    result = run_cli(monkeypatch, "plan", "--snapshot", write_state(tmp_path), "--pod", "")
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr.splitlines() == ["error: the pod name is empty: POD, pod/NAME or NAMESPACE/NAME"]
