"""`kresched version`: kubectl's `version` — what runs, and what it simulates."""

from __future__ import annotations

import platform

from kresched import KUBERNETES_VERSION, __version__
from kresched.cli.common import ENV, NoColorOpt, Output, OutputOpt, command, emit, make_options


@command
def version_command(output: OutputOpt = Output.table, no_color: NoColorOpt = False) -> int:
    """Print kresched's version, the kube-scheduler it simulates and the Python it runs on.

    -o json or -o yaml prints the same as one document (`--version` prints the version alone).

    Examples:

    \b
      kresched version
      kresched version -o json
    """
    opts = make_options(None, None, None, output, no_color)
    data = {"version": __version__, "kubernetes": KUBERNETES_VERSION, "python": platform.python_version()}

    def view() -> str:
        return (f"kresched: {data['version']}\nsimulates: kube-scheduler {data['kubernetes']}\n"
                f"Python: {data['python']}")

    if opts.output in (Output.table, Output.wide):
        ENV.write(view())
        return 0
    emit(opts.output, data, view)
    return 0
