"""`kresched untaint`: remove kresched's leftover node reservations — never anyone else's taints."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from kresched.cli.act import DryRunOpt, json_lines, make_api, make_reporter, write_json_line
from kresched.cli.common import (
    ENV,
    ContextOpt,
    KubeconfigOpt,
    NoColorOpt,
    Output,
    OutputOpt,
    SnapshotOpt,
    command,
    load_state,
    make_options,
    parse_duration,
)
from kresched.errors import ExitCode, InputError
from kresched.execute.untaint import untaint
from kresched.render.events import summary_text


@command
def untaint_command(
    nodes: Annotated[list[str] | None, typer.Argument(metavar="[NODE]...", help="Only these nodes.")] = None,
    older_than: Annotated[str, typer.Option("--older-than", metavar="DURATION",
                                            help="Also remove reservations older than this, even if their pod "
                                                 "is still Pending.")] = "10m",
    all_: Annotated[bool, typer.Option("--all", help="Remove every kresched reservation.")] = False,
    dry_run: DryRunOpt = False,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.table,
    no_color: NoColorOpt = False,
) -> int:
    """Remove kresched's reservations (taint CriticalAddonsOnly=kresched:NoSchedule and its
    kresched.io/* annotations) whose pod is bound or gone, or that are older than --older-than.

    It only ever removes what kresched placed, so it does not ask for confirmation. A
    CriticalAddonsOnly taint with another value (managed clouds put one on system node pools) is
    never touched.

    Examples:

      kresched untaint

      kresched untaint node-7 --all --dry-run
    """
    opts = make_options(snapshot, kubeconfig, context, output, no_color)
    ttl = parse_duration(older_than, "--older-than")
    state = load_state(opts)
    unknown = [n for n in nodes or [] if n not in state.node_by_name]
    if unknown:
        raise InputError(f"no such node: {', '.join(unknown)}")
    api = make_api(opts, state, dry_run, False)
    report = make_reporter(opts, api.mode)
    result = untaint(api, state, datetime.now(UTC), ttl, report, all_=all_, nodes=nodes or None)
    data = {
        "removed": [d.reservation.node for d in result.removed],
        "kept": [d.reservation.node for d in result.kept],
        "failed": [d.reservation.node for d in result.failed],
        "mode": api.mode,
    }
    if json_lines(opts):
        write_json_line({"action": "summary", **data})
    elif not (result.removed or result.kept or result.failed):
        ENV.out.print("No kresched reservations found.")
    else:
        ENV.out.print(summary_text(data))
    return ExitCode.PARTIAL if result.failed else ExitCode.OK
