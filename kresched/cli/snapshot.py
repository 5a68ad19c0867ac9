"""`kresched snapshot`: capture the state a plan needs into one file."""

from __future__ import annotations

from typing import Annotated

import typer

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
)
from kresched.sources.snapshot import write_snapshot


@command
def snapshot(
    file: Annotated[str | None, typer.Option("--file", metavar="FILE",
                                             help="Write here instead of stdout; gzip when it ends in .gz.")] = None,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: OutputOpt = Output.json,
    no_color: NoColorOpt = False,
) -> int:
    """Write the nodes, pods, PodDisruptionBudgets, PriorityClasses, Namespaces, workloads and
    storage objects (PersistentVolumes, claims, StorageClasses, CSINodes) a plan needs as one JSON
    List, stripped of managedFields and of every field planning does not use.

    Examples:

      kresched snapshot --file cluster.json.gz

      kresched snapshot --snapshot dump.yaml --file small.json   # convert and shrink a kubectl dump
    """
    opts = make_options(snapshot, kubeconfig, context, output, no_color)
    state = load_state(opts)
    write_snapshot(state, file, stdout=getattr(ENV.stdout, "buffer", None))
    if file:
        ENV.err.print(f"wrote {len(state.nodes)} nodes, {len(state.pods)} pods, {len(state.pdbs)} "
                      f"PodDisruptionBudgets, {len(state.priority_classes)} PriorityClasses, "
                      f"{len(state.storage.pvcs)} PersistentVolumeClaims to {file}")
    return 0
