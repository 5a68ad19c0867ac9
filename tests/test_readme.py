"""The README's and the docs' examples stay true, and their links lead somewhere.

Every `kresched ...` line in the `sh` blocks of README.md and docs/**/*.md that runs on the built-in
demo cluster (`--snapshot demo`) or on a snapshot in `examples/` runs, without a traceback, and ends
as documented; an excerpt of what one prints (a `text` block under `<!-- output of: COMMAND -->`)
is what it prints today at 80 columns, its lines in order (`...` stands for lines left out). Every
relative link in them points to a file that exists, and a link's `#anchor` to
a heading of that file (as GitHub makes anchors of headings)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").rglob("*.md"))
PAGES = [README, *DOCS]


def _examples(pages: list[Path]) -> list[str]:
    blocks = [b for page in pages for b in re.findall(r"```sh\n(.*?)```", page.read_text(), flags=re.S)]
    lines = [ln.strip() for b in blocks for ln in b.splitlines()]
    runnable = re.compile(r"--snapshot (demo|examples/\S+)( |$)")
    return [ln for ln in lines if ln.startswith("kresched ") and runnable.search(ln) and "&&" not in ln]


def _verbs(pages: list[Path]) -> set[str]:
    return {shlex.split(ex)[1] for ex in _examples(pages)}


def test_the_readme_itself_shows_explain_plan_and_preempt_on_the_demo() -> None:
    assert {"plan", "explain", "preempt"} <= _verbs([README])


def test_the_readme_and_docs_have_demo_examples_for_every_command() -> None:
    assert {"plan", "explain", "preempt", "drain", "reconcile", "rebalance", "untaint"} <= _verbs(PAGES)


@pytest.mark.parametrize("example", sorted(set(_examples(PAGES))))
def test_an_example_in_the_docs_runs(example: str) -> None:
    done = _run(example)
    assert "Traceback" not in done.stderr
    # 3 is the documented answer for the pod nothing can help (and a drain refused without a flag).
    assert done.returncode in (0, 3), f"{example}: exit {done.returncode}: {done.stderr}"
    assert done.stdout.strip(), f"{example} printed nothing"


def _excerpts(pages: list[Path]) -> list[tuple[str, str]]:
    found = [m for page in pages for m in re.findall(r"<!-- output of: (kresched [^>]*?) -->\n```text\n(.*?)```",
                                                       page.read_text(), flags=re.S)]
    return [(cmd, text) for cmd, text in found]


def _run(example: str, **env: str) -> subprocess.CompletedProcess[str]:
    args = shlex.split(example.split("#")[0])[1:]
    return subprocess.run([sys.executable, "-m", "kresched", *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, **env})


def test_every_page_with_an_excerpt_shows_its_command() -> None:
    assert {cmd for cmd, _ in _excerpts(PAGES)} <= set(_examples(PAGES))
    assert len(_excerpts([README])) >= 3


@pytest.mark.parametrize(("command", "excerpt"), _excerpts(PAGES), ids=[c for c, _ in _excerpts(PAGES)])
def test_an_excerpt_of_output_is_what_the_command_prints(command: str, excerpt: str) -> None:
    printed = [ln.rstrip() for ln in _run(command, COLUMNS="80", NO_COLOR="1").stdout.splitlines()]
    at = 0
    for line in (ln.rstrip() for ln in excerpt.splitlines()):
        if line == "...":
            continue
        assert line in printed[at:], f"{command}: not printed (after line {at}): {line!r}"
        at = printed.index(line, at) + 1


def _anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces `-`."""
    text = re.sub(r"`|\*", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {_anchor(h) for h in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", t)]


def test_the_anchor_rule_is_githubs() -> None:
    assert _anchor("How `rebalance` decides") == "how-rebalance-decides"
    assert _anchor("kresched's own configuration") == "krescheds-own-configuration"
    assert _anchor("Running in CI") == "running-in-ci"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_points_to_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for link in _links(page):
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        if not target.exists():
            broken.append(f"{link}: no such file")
        elif anchor and target.suffix == ".md" and anchor not in _anchors(target):
            broken.append(f"{link}: no such heading in {target.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: {broken}"


def test_the_docs_pages_are_all_reachable_from_the_readme() -> None:
    seen: set[Path] = set()
    todo = [README]
    while todo:
        page = todo.pop()
        if page in seen:
            continue
        seen.add(page)
        for link in _links(page):
            target = (page.parent / link.partition("#")[0]).resolve()
            if target.suffix == ".md" and target.exists():
                todo.append(target)
    assert set(DOCS) <= seen, sorted(str(p.relative_to(ROOT)) for p in set(DOCS) - seen)


def test_the_rbac_page_lists_exactly_the_calls_kresched_makes() -> None:
    from kresched.render.manifests import API_CALLS, Permission

    def granted(p: Permission) -> str:
        if p.only_with_apply:
            return "`preempt -f --apply` only (never granted by `manifests`)"
        if p.only_with_pdb_violation:
            return "only with `--allow-pdb-violation`"
        if p.scope == "lock":
            return "`reconcile`'s Lease only, in its namespace (Role)"
        if p.scope == "node-lease":
            return "in `kube-node-lease` only (Role)"
        return "always (ClusterRole)"

    rows = {f"| {p.verb} | {p.rbac_resource} | {p.group or '(core)'} | {granted(p)} | {p.why} |" for p in API_CALLS}
    page = (ROOT / "docs" / "reference" / "rbac.md").read_text()
    documented = {ln for ln in page.splitlines() if ln.startswith("| ") and not ln.startswith("| verb ")}
    assert documented == rows
