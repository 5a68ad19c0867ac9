"""`kresched manifests`: every object is what the Kubernetes API accepts, field by field; the RBAC is
exactly what kresched calls; the CronJob runs a `reconcile` the real CLI accepts; the Dockerfile
builds the image the CronJob expects."""

from __future__ import annotations

import copy
import fnmatch
import io
import json
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from kresched import __version__
from kresched.cli import app
from kresched.cli.common import ENV, parse_duration
from kresched.errors import ExitCode
from kresched.render.manifests import DEFAULT_IMAGE, RUN_AS_USER, ManifestOptions, reconcile_args
from tests.k8s_types import round_trip, schema_errors

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cli(monkeypatch) -> Iterator[Any]:
    """Run the real CLI in-process; returns (exit code, stdout text, stderr text)."""
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    monkeypatch.setattr(ENV, "stdout", out)
    monkeypatch.setattr(ENV, "stderr", err)
    for cached in ("out", "err"):
        monkeypatch.delitem(ENV.__dict__, cached, raising=False)

    def run(*args: str) -> tuple[int, str, str]:
        start, err_start = out.buffer.tell(), len(err.getvalue())
        result = CliRunner().invoke(app, list(args), catch_exceptions=False)
        out.flush()
        return result.exit_code, out.buffer.getvalue()[start:].decode(), err.getvalue()[err_start:]

    yield run
    for cached in ("out", "err"):
        ENV.__dict__.pop(cached, None)


def manifests(cli: Any, *args: str) -> list[dict[str, Any]]:
    code, out, err = cli("manifests", *args)
    assert code == 0, err
    return [d for d in yaml.safe_load_all(out) if d is not None]


def by_kind(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The objects by kind; the Role and RoleBinding that read the kubelets' Leases as `Role/node-leases`
    and `RoleBinding/node-leases` (the lock's are `Role` and `RoleBinding`)."""
    kinds = [d["kind"] + ("/node-leases" if d["metadata"]["name"] == "kresched-node-leases" else "") for d in docs]
    assert len(set(kinds)) == len(kinds), kinds
    return dict(zip(kinds, docs, strict=True))


def container(docs: list[dict[str, Any]]) -> dict[str, Any]:
    (c,) = by_kind(docs)["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    return c


def flag_value(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


VARIANTS = {
    "defaults": (),
    "everything": ("--namespace", "kresched", "--create-namespace", "--schedule", "*/2 * * * *", "--image",
                   "registry.example.com/ops/kresched:dev", "--lease", "kresched/lock", "--min-priority", "1000000",
                   "--max-evictions", "3", "--deadline", "90s", "--min-pending", "2m", "--reservation-ttl", "1h",
                   "--max-grace", "5", "--allow-pdb-violation", "--priority-class", "", "--memory-limit", "2Gi"),
    "lease elsewhere": ("--namespace", "ops", "--lease", "kube-system/kresched"),
}


# -- valid Kubernetes objects ---------------------------------------------------------------------

@pytest.mark.parametrize("args", VARIANTS.values(), ids=VARIANTS.keys())
def test_every_object_has_only_fields_and_types_of_its_openapi_type(cli, args):
    docs = manifests(cli, *args)
    assert docs
    for doc in docs:
        assert schema_errors(doc) == [], doc["kind"]


@pytest.mark.parametrize("args", VARIANTS.values(), ids=VARIANTS.keys())
def test_every_object_survives_the_clients_deserialisation_unchanged(cli, args):
    for doc in manifests(cli, *args):
        assert round_trip(doc) == doc


BAD = [
    ("an unknown field", ["spec", "jobTemplate", "spec", "template", "spec", "containers", 0],
     lambda c: c.update(securityContex={}), "containers[0].securityContex: unknown field"),
    ("a quantity as a number", ["spec", "jobTemplate", "spec", "template", "spec", "containers", 0, "resources",
                                "limits"], lambda r: r.update(cpu=1), "limits.cpu: expected str, got int"),
    ("a boolean as a string", ["spec", "jobTemplate", "spec", "template", "spec", "containers", 0,
                               "securityContext"], lambda s: s.update(runAsNonRoot="true"),
     "securityContext.runAsNonRoot: expected bool, got str"),
    ("an integer as a boolean", ["spec"], lambda s: s.update(startingDeadlineSeconds=True),
     "spec.startingDeadlineSeconds: expected int, got bool"),
    ("a list as a string", ["spec", "jobTemplate", "spec", "template", "spec", "containers", 0],
     lambda c: c.update(args="reconcile"), "containers[0].args: expected a list"),
    ("a required field missing", ["spec", "jobTemplate", "spec", "template", "spec", "containers", 0],
     lambda c: c.pop("name"), "containers[0].name: required field missing"),
    ("a field of the wrong object", ["spec"], lambda s: s.update(activeDeadlineSeconds=300),
     "spec.activeDeadlineSeconds: unknown field (not in V1CronJobSpec)"),
]


@pytest.mark.parametrize(("what", "where", "change", "expected"), BAD, ids=[b[0] for b in BAD])
def test_the_schema_check_finds(cli, what, where, change, expected):
    cron = copy.deepcopy(by_kind(manifests(cli))["CronJob"])
    target: Any = cron
    for step in where:
        target = target[step]
    change(target)
    errors = schema_errors(cron)
    assert len(errors) == 1, errors
    assert expected in errors[0]


def test_the_schema_check_finds_an_unknown_kind():
    assert schema_errors({"apiVersion": "batch/v1", "kind": "CronJobb", "metadata": {"name": "x"}})


def test_json_output_is_one_list_of_the_same_objects(cli):
    args = VARIANTS["everything"]
    code, out, _ = cli("manifests", *args, "-o", "json")
    assert code == 0
    doc = json.loads(out)
    assert (doc["apiVersion"], doc["kind"]) == ("v1", "List")
    assert doc["items"] == manifests(cli, *args)
    code, out_yaml, _ = cli("manifests", *args, "-o", "yaml")
    assert [d for d in yaml.safe_load_all(out_yaml) if d] == doc["items"]


# -- RBAC ------------------------------------------------------------------------------------------

CLUSTER_RULES = [
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]},
    {"apiGroups": [""], "resources": ["persistentvolumeclaims"], "verbs": ["list"]},
    {"apiGroups": [""], "resources": ["persistentvolumes"], "verbs": ["list"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["replicationcontrollers"], "verbs": ["list"]},
    {"apiGroups": [""], "resources": ["services"], "verbs": ["list"]},
    {"apiGroups": ["apps"], "resources": ["replicasets"], "verbs": ["list"]},
    {"apiGroups": ["apps"], "resources": ["statefulsets"], "verbs": ["list"]},
    {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create"]},
    {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["list", "watch"]},
    {"apiGroups": ["resource.k8s.io"], "resources": ["deviceclasses"], "verbs": ["list"]},
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaims"], "verbs": ["list"]},
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceclaimtemplates"], "verbs": ["list"]},
    {"apiGroups": ["resource.k8s.io"], "resources": ["resourceslices"], "verbs": ["list"]},
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["podgroups"], "verbs": ["list"]},
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["priorityclasses"], "verbs": ["list"]},
    {"apiGroups": ["scheduling.k8s.io"], "resources": ["workloads"], "verbs": ["list"]},
    {"apiGroups": ["scheduling.volcano.sh"], "resources": ["podgroups"], "verbs": ["list"]},
    {"apiGroups": ["scheduling.x-k8s.io"], "resources": ["podgroups"], "verbs": ["list"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["csinodes"], "verbs": ["list"]},
    {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": ["list"]},
]


def test_the_cluster_role_grants_exactly_these_rules(cli):
    assert by_kind(manifests(cli))["ClusterRole"]["rules"] == CLUSTER_RULES


def test_delete_pods_is_granted_only_with_allow_pdb_violation(cli):
    without = by_kind(manifests(cli))
    with_ = by_kind(manifests(cli, "--allow-pdb-violation"))
    assert not [r for d in without.values() for r in d.get("rules", []) if "delete" in r["verbs"]]
    assert "--allow-pdb-violation" not in container(list(without.values()))["args"]
    expected = copy.deepcopy(CLUSTER_RULES)
    expected[4]["verbs"] = ["list", "watch", "delete"]
    assert with_["ClusterRole"]["rules"] == expected
    assert "--allow-pdb-violation" in container(list(with_.values()))["args"]


@pytest.mark.parametrize(("args", "namespace", "name"), [
    ((), "kube-system", "kresched"),
    (("--namespace", "ops"), "ops", "kresched"),
    (("--namespace", "ops", "--lease", "infra/kresched-lock"), "infra", "kresched-lock"),
])
def test_leases_are_granted_only_in_the_locks_namespace_and_the_lock_is_what_reconcile_uses(cli, args, namespace,
                                                                                            name):
    docs = by_kind(manifests(cli, *args))
    role, binding = docs["Role"], docs["RoleBinding"]
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == namespace
    assert role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [name],
         "verbs": ["get", "update"]},
    ]
    assert not [r for r in docs["ClusterRole"]["rules"] if "coordination.k8s.io" in r["apiGroups"]]
    assert flag_value(container(list(docs.values()))["args"], "--lease") == f"{namespace}/{name}"


def test_the_kubelets_leases_are_only_listed_and_only_in_kube_node_lease(cli):
    docs = by_kind(manifests(cli))
    role, binding = docs["Role/node-leases"], docs["RoleBinding/node-leases"]
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "kube-node-lease"
    assert role["rules"] == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list"]}]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]


def test_the_bindings_give_the_roles_to_the_cronjobs_service_account(cli):
    docs = by_kind(manifests(cli, "--namespace", "ops"))
    sa = docs["ServiceAccount"]["metadata"]
    pod_spec = docs["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert (sa["namespace"], pod_spec["serviceAccountName"]) == ("ops", sa["name"])
    assert docs["CronJob"]["metadata"]["namespace"] == "ops"
    for binding, role in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        assert docs[binding]["subjects"] == [{"kind": "ServiceAccount", "name": sa["name"], "namespace": "ops"}]
        assert docs[binding]["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": role,
                                            "name": docs[role]["metadata"]["name"]}


def test_the_namespace_is_included_only_when_asked(cli):
    assert "Namespace" not in by_kind(manifests(cli, "--namespace", "ops"))
    ns = by_kind(manifests(cli, "--namespace", "ops", "--create-namespace"))["Namespace"]
    assert ns["metadata"]["name"] == "ops"


# -- the CronJob ---------------------------------------------------------------------------------

def test_the_cronjob_runs_one_pass_at_a_time_within_its_deadline(cli):
    cron = by_kind(manifests(cli, "--schedule", "*/2 * * * *", "--deadline", "3m"))["CronJob"]
    spec, job = cron["spec"], cron["spec"]["jobTemplate"]["spec"]
    assert spec["schedule"] == "*/2 * * * *"
    assert spec["concurrencyPolicy"] == "Forbid"
    assert spec["startingDeadlineSeconds"] >= 10
    assert spec["successfulJobsHistoryLimit"] >= 1
    assert spec["failedJobsHistoryLimit"] >= 1
    deadline = parse_duration(flag_value(container([cron])["args"], "--deadline"), "--deadline")
    assert deadline == 180
    assert deadline < job["activeDeadlineSeconds"] <= deadline + 120
    assert job["backoffLimit"] == 0
    assert job["template"]["spec"]["restartPolicy"] == "Never"


def test_the_container_is_locked_down_and_knows_its_pod_name(cli):
    docs = manifests(cli)
    c = container(docs)
    pod_spec = by_kind(docs)["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert c["image"] == DEFAULT_IMAGE == f"ghcr.io/kresched/kresched:{__version__}"
    assert "command" not in c  # the image's ENTRYPOINT (kresched) runs the args
    assert c["securityContext"] == {
        "runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532, "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert pod_spec["securityContext"]["runAsUser"] == RUN_AS_USER
    assert {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}} in c["env"]
    assert set(c["resources"]["requests"]) == set(c["resources"]["limits"]) == {"cpu", "memory"}
    assert pod_spec["priorityClassName"] == "system-cluster-critical"


def test_the_options_reach_reconciles_arguments(cli):
    args = container(manifests(cli, *VARIANTS["everything"]))["args"]
    assert args[0] == "reconcile"
    assert [flag_value(args, f) for f in ("--lease", "--min-priority", "--max-evictions", "--deadline",
                                          "--min-pending", "--reservation-ttl", "--max-grace", "--output")] == [
        "kresched/lock", "1000000", "3", "90s", "2m", "1h", "5", "json"]
    assert "--allow-pdb-violation" in args


@pytest.mark.parametrize("args", VARIANTS.values(), ids=VARIANTS.keys())
def test_the_cronjobs_arguments_are_accepted_by_the_real_reconcile(cli, args):
    reconcile = container(manifests(cli, *args))["args"]
    code, out, err = cli(*reconcile, "--dry-run", "--snapshot", "demo")
    assert code == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert (summary["action"], summary["lock"], summary["mode"]) == ("summary", "acquired", "dry run")


def test_without_options_the_cronjob_runs_reconcile_with_reconciles_own_defaults():
    """The manifests spell every setting out; they must be the ones `kresched reconcile` defaults to
    without a --config file (the moderate preset: its flags default to None, meaning that)."""
    from kresched.plan.policy import preset

    command = typer.main.get_command(app).commands["reconcile"]  # type: ignore[attr-defined]
    defaults = {p.opts[0]: p.default for p in command.params if p.opts}
    own = preset("moderate").reconcile
    args = reconcile_args(ManifestOptions())
    for flag, seconds in (("--deadline", own.deadline_seconds), ("--min-pending", own.min_pending_seconds),
                          ("--reservation-ttl", own.reservation_ttl_seconds)):
        assert defaults[flag] is None, flag
        assert parse_duration(flag_value(args, flag), flag) == seconds, flag
    for flag, value in (("--max-evictions", own.max_evictions), ("--max-grace", own.max_grace_seconds)):
        assert defaults[flag] is None, flag
        assert int(flag_value(args, flag)) == value, flag
    assert flag_value(args, "--lease") == defaults["--lease"]
    assert "--min-priority" not in args
    assert defaults["--min-priority"] is None
    assert "--allow-pdb-violation" not in args
    assert defaults["--allow-pdb-violation"] is False


@pytest.mark.parametrize(("args", "message"), [
    (("--namespace", "Kube_System"), "--namespace 'Kube_System': not a valid namespace name"),
    (("--schedule", "every 5 minutes"), "--schedule 'every 5 minutes': expected a cron schedule"),
    (("--lease", "kresched"), "--lease 'kresched': expected NAMESPACE/NAME"),
    (("--deadline", "5"), "--deadline: at least 10s"),
    (("--deadline", "1.5m", "--min-pending", "0.5s"), "--min-pending: whole seconds only"),
    (("--memory-limit", "lots"), "--memory-limit 'lots': not a quantity"),
])
def test_bad_options_are_usage_errors(cli, args, message):
    code, out, err = cli("manifests", *args)
    assert (code, out) == (ExitCode.USAGE, "")
    assert message in err


def test_every_bad_option_is_reported_at_once(cli):
    code, _, err = cli("manifests", "--namespace", "A", "--schedule", "x", "--image", "")
    assert code == ExitCode.USAGE
    assert err.count("--") >= 3, err


# -- the image -------------------------------------------------------------------------------------

def dockerfile() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return [(ln.split(None, 1)[0].upper(), ln.split(None, 1)[1] if " " in ln else "") for ln in lines]


def test_the_dockerfile_builds_the_image_the_cronjob_expects(cli):
    steps = dockerfile()
    instructions = [i for i, _ in steps]
    assert steps[0] == ("FROM", "python:3.11-slim")
    (entrypoint,) = [a for i, a in steps if i == "ENTRYPOINT"]
    assert json.loads(entrypoint) == ["kresched"]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "kresched" in pyproject["project"]["scripts"]
    # The user the image ends as is the one the pod runs as (runAsNonRoot needs it numeric).
    users = [a for i, a in steps if i == "USER"]
    assert users
    assert users[-1] == f"{RUN_AS_USER}:{RUN_AS_USER}"
    pod = container(manifests(cli))["securityContext"]
    assert (pod["runAsUser"], pod["runAsGroup"]) == (RUN_AS_USER, RUN_AS_USER)
    # Installed as a package, after everything the build needs is copied in.
    install = next(n for n, (i, a) in enumerate(steps)
                   if i == "RUN" and re.search(r"\bpip install(\s+-\S+)*\s+\.(\s|$)", a))
    copied = " ".join(a for i, a in steps[:install] if i == "COPY")
    for needed in ("pyproject.toml", pyproject["project"]["readme"], "kresched"):
        assert re.search(rf"(^|\s){re.escape(needed)}(\s|$)", copied), needed
    assert instructions.index("USER") > install
    for needed in ("pyproject.toml", pyproject["project"]["readme"], "kresched", "kresched/__init__.py"):
        assert in_build_context(needed), needed
    assert not in_build_context("tests/test_manifests.py")


def in_build_context(path: str) -> bool:
    """Whether .dockerignore lets `path` into the build context (the last matching pattern wins)."""
    included = True
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negated = pattern.startswith("!")
        pattern = pattern.removeprefix("!").rstrip("/")
        parts = path.split("/")
        if any(fnmatch.fnmatch("/".join(parts[:n]), pattern) for n in range(1, len(parts) + 1)) or (
                pattern.startswith("**/") and any(fnmatch.fnmatch(p, pattern[3:]) for p in parts)):
            included = negated
    return included
