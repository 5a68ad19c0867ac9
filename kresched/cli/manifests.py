"""`kresched manifests`: what to apply to run `kresched reconcile` in the cluster as a CronJob."""

from __future__ import annotations

from typing import Annotated

import typer

from kresched.cli.common import (
    ENV,
    NoColorOpt,
    Output,
    OutputOpt,
    at_least,
    command,
    is_table,
    load_policy,
    load_profiles,
    make_options,
    parse_duration,
)
from kresched.errors import InputError
from kresched.render.common import to_json, to_yaml
from kresched.render.manifests import (
    DEFAULT_IMAGE,
    ManifestOptions,
    build_manifest_list,
    build_manifests,
    manifest_errors,
)


@command
def manifests_command(
    namespace: Annotated[str, typer.Option("--namespace", "-n", metavar="NAMESPACE",
                                           help="Where the ServiceAccount and the CronJob live.")] = "kube-system",
    create_namespace: Annotated[bool, typer.Option("--create-namespace", help="Include the Namespace.")] = False,
    schedule: Annotated[str, typer.Option("--schedule", metavar="CRON", help="When reconcile runs.")] = "*/5 * * * *",
    image: Annotated[str, typer.Option("--image", metavar="IMAGE", help="The kresched image (see the Dockerfile).")] \
    = DEFAULT_IMAGE,
    lease: Annotated[str | None, typer.Option("--lease", metavar="NS/NAME",
                                              help="The Lease used as reconcile's lock (default: "
                                                   "NAMESPACE/kresched).", show_default=False)] = None,
    min_priority: Annotated[int | None, typer.Option("--min-priority", metavar="N",
                                                     help="Also help pods with at least this priority.")] = None,
    max_evictions: Annotated[int | None, typer.Option("--max-evictions", callback=at_least(0), metavar="N",
                                                      show_default=False,
                                                      help="Evictions allowed per pass (default 10, or --config's).")]
    = None,
    deadline: Annotated[str | None, typer.Option("--deadline", metavar="DURATION", show_default=False,
                                                 help="Each pass ends within this (the Job is stopped a minute later; "
                                                      "default 4m, or --config's).")] = None,
    min_pending: Annotated[str | None, typer.Option("--min-pending", metavar="DURATION", show_default=False,
                                                    help="Only pods Unschedulable for at least this long (default "
                                                         "60s, or --config's).")] = None,
    reservation_ttl: Annotated[str | None, typer.Option("--reservation-ttl", metavar="DURATION", show_default=False,
                                                        help="Reservations older than this are stale (default 10m, "
                                                             "or --config's).")] = None,
    max_grace: Annotated[int | None, typer.Option("--max-grace", callback=at_least(0), metavar="SECONDS",
                                                  show_default=False,
                                                  help="reconcile's --max-grace (default 10, or --config's).")]
    = None,
    config: Annotated[str | None, typer.Option(
        "--config", metavar="FILE",
        help="kresched's KreschedConfiguration: put into a ConfigMap the CronJob mounts (reconcile --config); the "
             "options given here still override it.")] = None,
    scheduler_config: Annotated[str | None, typer.Option(
        "--scheduler-config", metavar="FILE",
        help="The cluster's KubeSchedulerConfiguration: put into a ConfigMap the CronJob mounts (reconcile "
             "--scheduler-config).")] = None,
    allow_pdb_violation: Annotated[bool, typer.Option(
        "--allow-pdb-violation",
        help="Let reconcile delete tier-3 victims a PodDisruptionBudget protects (grants delete on pods).")] = False,
    rebalance: Annotated[bool, typer.Option(
        "--rebalance", help="The CronJob also runs one bounded rebalance pass (reconcile --rebalance).")] = False,
    priority_class: Annotated[str, typer.Option("--priority-class", metavar="NAME",
                                                help="The CronJob's pods' PriorityClass ('' for none; some clusters "
                                                     "allow system-* classes only in kube-system).")]
    = "system-cluster-critical",
    memory_limit: Annotated[str, typer.Option("--memory-limit", metavar="QUANTITY",
                                              help="Memory limit of reconcile's container (raise it for clusters "
                                                   "with tens of thousands of pods).")] = "1Gi",
    output: OutputOpt = Output.yaml,
    no_color: NoColorOpt = False,
) -> int:
    """Print what to apply to run `kresched reconcile` in the cluster: a ServiceAccount, a
    least-privilege ClusterRole (exactly the calls kresched makes), a Role for the Lease in its
    namespace, their bindings, and a CronJob (YAML documents; `-o json`: one List).

    Apply them with `kresched manifests | kubectl apply -f -`.

    Examples:

    \b
      kresched manifests
      kresched manifests --namespace kresched --create-namespace --schedule '*/2 * * * *'
      kresched manifests --min-priority 1000000 --max-evictions 5 -o json
    """
    opts = make_options(None, None, None, output, no_color)
    if is_table(opts.output):
        raise InputError(f"-o {opts.output}: manifests are applied with kubectl, not read as a table; use -o yaml "
                         "(the default) or -o json")
    policy = load_policy(config)
    if scheduler_config is not None:
        load_profiles(scheduler_config)  # checked as reconcile will read it: a bad file stops here
    options = ManifestOptions(
        namespace=namespace, create_namespace=create_namespace, schedule=schedule, image=image, lease=lease,
        min_priority=min_priority, max_evictions=max_evictions, allow_pdb_violation=allow_pdb_violation,
        rebalance=rebalance, deadline_seconds=_seconds(deadline, "--deadline"),
        min_pending_seconds=_seconds(min_pending, "--min-pending"),
        reservation_ttl_seconds=_seconds(reservation_ttl, "--reservation-ttl"), max_grace_seconds=max_grace,
        priority_class=priority_class, memory_limit=memory_limit,
        config=_document_text(config, "--config"), policy=policy,
        scheduler_config=_document_text(scheduler_config, "--scheduler-config"),
    )
    errors = manifest_errors(options)
    if errors:
        raise InputError("; ".join(errors))
    if opts.output is Output.json:
        ENV.write(to_json(build_manifest_list(options)))
    else:
        ENV.write("---\n".join(to_yaml(obj) for obj in build_manifests(options)))
    return 0


def _document_text(path: str | None, option: str) -> str | None:
    """The configuration document in `path` (already checked) as YAML, for its ConfigMap (a
    ConfigMap given in its place yields the document it holds)."""
    if path is None:
        return None
    from kresched.sources.config_file import read_config_document

    return to_yaml(read_config_document(path, option, key="config.yaml"))


def _seconds(text: str | None, option: str) -> int | None:
    if text is None:
        return None
    seconds = parse_duration(text, option)
    if seconds != int(seconds):
        raise InputError(f"{option}: whole seconds only ({text!r})")
    return int(seconds)
