"""Shared pytest configuration. Fixtures live next to what they serve (e.g. tests/fakeapi).

Golden files (tests/golden/): a test compares formatted output with a file through the `golden`
fixture; `pytest --update-golden` rewrites the files instead, to be reviewed in the diff.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import settings

pytest_plugins = ["tests.fakeapi.fixtures"]

# Property tests draw the same examples on every run and machine (a fixed seed per test, no example
# database): a verdict never depends on the run. A failure found once is kept as an `@example`.
settings.register_profile("kresched", derandomize=True, database=None)
settings.load_profile("kresched")

GOLDEN_DIR = Path(__file__).parent / "golden"


def pytest_configure(config: pytest.Config) -> None:
    # Started in the background by a shell without job control (`nohup ... &` in a script), the
    # suite inherits SIGINT ignored, and so would every kresched it starts: kresched keeps an
    # ignored SIGINT ignored, as it should, and the Ctrl-C tests would wait for nothing. They test
    # an operator's terminal: give the suite the interpreter's usual handler (its children then
    # start with the default disposition).
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="Rewrite the golden files under tests/golden/ from the current output.")


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """`golden(name, text)`: assert `text` equals tests/golden/<name>, or write it there under
    `--update-golden`."""
    update = bool(request.config.getoption("--update-golden"))

    def check(name: str, text: str) -> None:
        path = GOLDEN_DIR / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        if not path.exists():
            pytest.fail(f"golden file {path} is missing: run pytest with --update-golden and review the diff")
        assert text == path.read_text(encoding="utf-8"), (
            f"output differs from golden file {path}; if the change is intended, run pytest with "
            "--update-golden and review the diff")

    return check
