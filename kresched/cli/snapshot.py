"""`kresched snapshot`: capture the state a plan needs into one file."""

from __future__ import annotations

import gzip
from typing import Annotated

import msgspec
import typer

from kresched.cli.common import (
    ENV,
    ContextOpt,
    KubeconfigOpt,
    NoColorOpt,
    Output,
    SnapshotOpt,
    command,
    is_table,
    make_options,
)
from kresched.cli.load import load_state
from kresched.errors import InputError
from kresched.model.cluster import ClusterState
from kresched.render.common import to_yaml
from kresched.sources.snapshot import encode_snapshot, write_snapshot

#: A snapshot is a file to read back: only the formats it can be written in are offered.
SnapshotOutputOpt = Annotated[Output, typer.Option("--output", "-o", metavar="FORMAT", case_sensitive=False,
                                                   help="json (the default) or yaml.", show_default=False)]


def write_yaml_snapshot(state: ClusterState, file: str | None) -> None:
    """The same List as YAML (what `kubectl get -o yaml` users diff and read); gzip for `.gz`."""
    text = to_yaml(msgspec.json.decode(encode_snapshot(state)))
    if file is None or file == "-":
        ENV.write(text)
        return
    data = text.encode()
    if file.endswith(".gz"):
        data = gzip.compress(data, compresslevel=6)
    try:
        with open(file, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise InputError(f"{file}: cannot write: {exc.strerror or exc}") from None


@command
def snapshot(
    file: Annotated[str | None, typer.Option("--file", metavar="FILE",
                                             help="Write here instead of stdout; gzip when it ends in .gz.")] = None,
    snapshot: SnapshotOpt = None,
    kubeconfig: KubeconfigOpt = None,
    context: ContextOpt = None,
    output: SnapshotOutputOpt = Output.json,
    no_color: NoColorOpt = False,
) -> int:
    """Write the nodes, pods, PodDisruptionBudgets, PriorityClasses, Namespaces, workloads, storage
    objects (PersistentVolumes, claims, StorageClasses, CSINodes), devices (DeviceClasses,
    ResourceSlices, ResourceClaims, ResourceClaimTemplates) and gangs (PodGroups, Workloads) a plan
    needs as one List (JSON, or YAML with -o yaml), stripped of managedFields and of every field
    planning does not use.
    On a cluster: `kresched snapshot --file cluster.json.gz` (gzip when the name ends in .gz); from a
    kubectl dump: `--snapshot dump.yaml --file small.json` converts and shrinks it.

    Examples:

    \b
      kresched snapshot --snapshot demo --file demo.json.gz
      kresched snapshot --snapshot demo -o yaml
    """
    opts = make_options(snapshot, kubeconfig, context, output, no_color)
    if is_table(opts.output):
        raise InputError(f"-o {opts.output}: a snapshot is a file to read back, not a table; use -o json or -o yaml")
    state = load_state(opts)
    if opts.output is Output.yaml:
        write_yaml_snapshot(state, file)
    else:
        write_snapshot(state, file, stdout=getattr(ENV.stdout, "buffer", None))
    if file:
        dra = state.dra
        devices = (f", {len(dra.classes)} DeviceClasses, {len(dra.slices)} ResourceSlices, {len(dra.claims)} "
                   f"ResourceClaims, {len(dra.templates)} ResourceClaimTemplates"
                   if dra.classes or dra.slices or dra.claims or dra.templates else "")
        gangs = (f", {len(state.pod_groups)} PodGroups, {len(state.scheduling_workloads)} Workloads"
                 if state.pod_groups or state.scheduling_workloads else "")
        ENV.say(f"wrote {len(state.nodes)} nodes, {len(state.pods)} pods, {len(state.pdbs)} "
                f"PodDisruptionBudgets, {len(state.priority_classes)} PriorityClasses, "
                f"{len(state.storage.pvcs)} PersistentVolumeClaims{devices}{gangs} to {file}")
    return 0
