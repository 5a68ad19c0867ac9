"""`kresched untaint`: remove kresched's leftover node reservations — never anyone else's taints."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

import typer

from kresched.cli.act import (
    ClientDryRunOpt,
    DryRun,
    client_dry_run,
    cluster_dict,
    make_api,
    make_recorder,
    make_reporter,
    write_summary,
)
from kresched.cli.common import (
    ContextOpt,
    KubeconfigOpt,
    NoColorOpt,
    Output,
    OutputOpt,
    SnapshotOpt,
    command,
    make_options,
    parse_duration,
)
from kresched.cli.complete import complete_nodes
from kresched.cli.load import load_state
from kresched.cli.resolve import resolve_nodes
from kresched.errors import ExitCode


@command
def untaint_command(
    nodes: Annotated[list[str] | None, typer.Argument(metavar="[NODE]...", show_default=False,
                                                      autocompletion=complete_nodes,
                                                      help="Only these nodes (NODE or node/NODE).")] = None,
    older_than: Annotated[str, typer.Option("--older-than", metavar="DURATION",
                                            help="Also remove reservations older than this, even if their pod "
                                                 "is still Pending.")] = "10m",
    all_: Annotated[bool, typer.Option("--all", help="Remove every kresched reservation.")] = False,
    out_of_service: Annotated[bool, typer.Option(
        "--out-of-service", help="Also remove node.kubernetes.io/out-of-service (the non-graceful node shutdown's "
                                 "taint, the operator's): only once the machine is back.")] = False,
    dry_run: ClientDryRunOpt = DryRun.none,
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
    never touched. A node.kubernetes.io/out-of-service taint (`drain --out-of-service`) is named
    and kept: it is the operator's, removed with --out-of-service once the machine is back.

    Examples:

    \b
      kresched untaint --dry-run --snapshot demo
      kresched untaint node/worker-a2 --all --dry-run --snapshot demo -o json
    """
    # Here, not at the top: other verbs start without them.
    from kresched.execute.outofservice import back_in_service
    from kresched.execute.untaint import untaint
    from kresched.plan.lost import OUT_OF_SERVICE_TAINT
    from kresched.render.results import untaint_summary, untaint_view

    opts = make_options(snapshot, kubeconfig, context, output, no_color)
    client = client_dry_run(dry_run, "untaint")
    ttl = parse_duration(older_than, "--older-than")
    state = load_state(opts)
    names = [n.name for n in resolve_nodes(state, nodes or [])]
    api = make_api(opts, state, client)
    report = make_reporter(opts, api.mode)
    with make_recorder(api, "untaint") as recorder:
        result = untaint(api, state, datetime.now(UTC), ttl, report, all_=all_, nodes=names or None,
                         recorder=recorder)
    out_of_service_nodes = [n.name for n in state.nodes if (not names or n.name in names)
                            and any(t.key == OUT_OF_SERVICE_TAINT for t in n.spec.taints)]
    in_service, kept = back_in_service(api, out_of_service_nodes, out_of_service, report)
    data = untaint_summary(result, api.mode, cluster_dict(opts))
    if out_of_service_nodes:
        data["outOfService"] = {"removed": in_service, "kept": kept}
        if in_service:
            data["message"] = f"{data['message']}; {OUT_OF_SERVICE_TAINT} removed from {', '.join(in_service)}"
    write_summary(opts, report, data, lambda: untaint_view(result, data))
    return ExitCode.PARTIAL if result.failed else ExitCode.OK
