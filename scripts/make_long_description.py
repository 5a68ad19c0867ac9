#!/usr/bin/env python3
"""Write `README.pypi.md`, the package's long description (pyproject's `readme`): README.md with every
relative link made absolute, to this version's files in the repository.

    python scripts/make_long_description.py            # rewrite the file
    python scripts/make_long_description.py --check    # exit 1 if it differs from what this writes

README.md links to `docs/...` relatively, which works where the README is read from the repository
(GitHub, a checkout) and nowhere else: PyPI shows the long description alone. There the links lead
to the same files in the repository (pyproject's `[project.urls] Repository`) at the release's tag,
`v<version>` (kresched's `__version__`), so the page of a release documents that release.
tests/test_readme.py keeps the file in step with README.md and the version.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
OUT = ROOT / "README.pypi.md"
#: A Markdown link's target that is relative: no scheme (`https:`, `mailto:`).
_RELATIVE = re.compile(r"\]\((?![a-zA-Z][a-zA-Z0-9+.-]*:)([^)\s]+)\)")
_NOTE = "<!-- Generated from README.md by scripts/make_long_description.py: edit README.md and rerun it. -->\n"


def repository() -> str:
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    return str(urls["Repository"]).rstrip("/")


def version() -> str:
    m = re.search(r'^__version__ = "([^"]+)"', (ROOT / "kresched" / "__init__.py").read_text(), flags=re.M)
    assert m is not None, "kresched/__init__.py has no __version__"
    return m.group(1)


def long_description(text: str, base: str) -> str:
    """`text` (README.md) with each relative link made absolute against `base` (a URL ending in
    `/`): `docs/guide/drain.md` → `<base>docs/guide/drain.md`, `#set-up` → `<base>README.md#set-up`."""
    def absolute(m: re.Match[str]) -> str:
        target = m.group(1)
        return f"]({base}{'README.md' if target.startswith('#') else ''}{target})"

    return _NOTE + _RELATIVE.sub(absolute, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not up to date")
    args = parser.parse_args(argv)
    text = long_description(README.read_text(), f"{repository()}/blob/v{version()}/")
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.name} is not up to date: run scripts/make_long_description.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
