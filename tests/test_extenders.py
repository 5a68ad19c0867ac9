"""The scheduler's extenders, called as kube-scheduler v1.36 calls them: over real HTTP, against an
extender of the suite's own (`tests.extender_server`, on 127.0.0.1), from the planner, `explain`
and the CLI. What the extender is sent (ExtenderArgs with whole Nodes or NodeNames, only the
feasible nodes, only for pods it manages, never bind), and how its answers are merged: its failed
nodes in the `0/N nodes are available` message, its weighted scores in the choice, its vetting of
preemption victims, its errors (an error for the pod, or skipped when ignorable; the answer says
which), and offline runs that cannot reach it (the warning stays).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kresched.plan.explain import explain_pod
from kresched.plan.planner import plan_pod
from kresched.plan.plans import PlanOptions
from kresched.sched.config import parse_scheduler_config
from kresched.sched.extender import ExtenderError
from kresched.sched.profile import Profiles, build_profiles
from kresched.sources.extenders import HttpTransport
from tests.builders import make_node, make_pod, make_state
from tests.clirun import Result, reset_env, run_cli
from tests.extender_server import FakeExtender, Policy, closed_port, running_extender
from tests.test_cli_plan import write

Run = Callable[..., Result]

HIGH = 2_000_000_000


def _config(url: str, **fields: object) -> dict:
    ext = {"urlPrefix": url, "filterVerb": "filter", "prioritizeVerb": "prioritize", "preemptVerb": "preempt",
           "weight": 1, **fields}
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", "extenders": [ext]}


def _profiles(doc: dict, unreachable: dict[str, str] | None = None) -> Profiles:
    cfg, specs = parse_scheduler_config(doc)
    return build_profiles(cfg, specs, "sched.yaml").with_extenders(cfg.extenders, HttpTransport(ExtenderError),
                                                                   unreachable or {})


def _three(**kw: object) -> list:
    return [make_node("node-a"), make_node("node-b"), make_node("node-c")]


@pytest.fixture
def ext() -> Iterator[FakeExtender]:
    with running_extender() as server:
        yield server


# -- filter ----------------------------------------------------------------------------------------
def test_failed_nodes_count_in_the_schedulers_message_and_the_rest_is_chosen_from(ext: FakeExtender) -> None:
    ext.policy = Policy(deny={"node-a": "node(s) were denied by the extender"},
                        unresolvable={"node-b": "node(s) lack the license"})
    state = make_state(_three(), [make_pod("p", cpu="1", priority=HIGH)])
    profiles = _profiles(_config(ext.url))
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=profiles))
    assert (plan.outcome, plan.node) == ("fits", "node-c")
    ext.policy.deny["node-c"] = "node(s) were denied by the extender"
    exp = explain_pod(state, state.pod("default/p"), profiles=profiles)
    assert exp.message == "0/3 nodes are available: 1 node(s) lack the license, 2 node(s) were denied by the extender."
    # The unresolvable node is no candidate for preemption; the others have nothing to evict.
    assert exp.preemption_message == ("0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
                                      "2 No preemption victims found for incoming pod.")


def test_only_the_nodes_the_filter_plugins_kept_are_sent(ext: FakeExtender) -> None:
    nodes = [make_node("node-a"), make_node("node-b", unschedulable=True), make_node("node-c", cpu="1")]
    state = make_state(nodes, [make_pod("p", cpu="2", priority=HIGH)])
    plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url))))
    verb, body = ext.requests[0]
    assert verb == "filter"
    assert [n["metadata"]["name"] for n in body["Nodes"]["items"]] == ["node-a"]
    assert (body["NodeNames"], body["Pod"]["metadata"]["name"]) == (None, "p")
    # One feasible node: the scheduler takes it unscored, so prioritize is never asked.
    assert ext.verbs() == ["filter"]


def test_a_node_cache_capable_extender_gets_node_names_and_answers_with_names(ext: FakeExtender) -> None:
    ext.policy = Policy(deny={"node-b": "node(s) are busy"})
    state = make_state(_three(), [make_pod("p", cpu="1", priority=HIGH)])
    profiles = _profiles(_config(ext.url, nodeCacheCapable=True))
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=profiles))
    _, body = ext.requests[0]
    assert (body["Nodes"], body["NodeNames"]) == (None, ["node-a", "node-b", "node-c"])
    assert (plan.outcome, plan.node in ("node-a", "node-c")) == ("fits", True)
    assert set(plan.candidates) == {"node-a", "node-c"}


def test_a_cache_capable_extender_naming_a_node_it_was_not_sent_is_an_error(ext: FakeExtender) -> None:
    state = make_state([make_node("node-a"), make_node("node-b", unschedulable=True)],
                       [make_pod("p", cpu="1", priority=HIGH)])
    profiles = _profiles(_config(ext.url, nodeCacheCapable=True))

    def answer(verb: str, args: dict) -> tuple[int, object]:
        return 200, {"NodeNames": ["node-a", "node-b"]}

    ext.answer = answer  # type: ignore[method-assign]
    exp = explain_pod(state, state.pod("default/p"), profiles=profiles)
    assert exp.message == (f"extender \"{ext.url}\" claims a filtered node \"node-b\" which is not found in the input "
                           "node list")


def test_pods_the_extender_does_not_manage_never_reach_it(ext: FakeExtender) -> None:
    ext.policy = Policy(deny={"node-a": "no gpu here"})
    gpu = make_node("node-a", extra={"example.com/gpu": "2"})
    state = make_state([gpu, make_node("node-b")], [
        make_pod("plain", cpu="1", priority=HIGH),
        make_pod("trainer", cpu="1", priority=HIGH, limits={"example.com/gpu": "1"})])
    profiles = _profiles(_config(ext.url, managedResources=[{"name": "example.com/gpu"}]))
    plan_pod(state, state.pod("default/plain"), PlanOptions(profiles=profiles))
    assert ext.requests == []
    plan = plan_pod(state, state.pod("default/trainer"), PlanOptions(profiles=profiles))
    assert ext.verbs() == ["filter"]
    assert (plan.outcome, plan.message.startswith("0/2 nodes are available: 1 Insufficient example.com/gpu, 1 no "
                                                  "gpu here.")) == ("infeasible", True)


def test_resources_ignored_by_the_scheduler_are_left_to_the_extender(ext: FakeExtender) -> None:
    state = make_state([make_node("node-a")], [make_pod("trainer", cpu="1", limits={"example.com/gpu": "1"})])
    doc = _config(ext.url, managedResources=[{"name": "example.com/gpu", "ignoredByScheduler": True}])
    plan = plan_pod(state, state.pod("default/trainer"), PlanOptions(profiles=_profiles(doc)))
    assert (plan.outcome, plan.node) == ("fits", "node-a")


# -- prioritize ------------------------------------------------------------------------------------
def test_extender_scores_times_weight_times_ten_decide_between_equal_nodes(ext: FakeExtender) -> None:
    ext.policy = Policy(scores={"node-b": 3, "node-c": 7})
    state = make_state(_three(), [make_pod("p", cpu="1", memory="1Gi", priority=HIGH)])
    profiles = _profiles(_config(ext.url, weight=5))
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=profiles))
    assert (plan.node, plan.candidates) == ("node-c", ("node-c",))
    exp = explain_pod(state, state.pod("default/p"), profiles=profiles)
    rows = {s.node: s for s in exp.scores}
    col = {n: next(p for p in rows[n].plugins if p.plugin == ext.url) for n in rows}
    assert [(col[n].raw, col[n].normalized, col[n].weighted) for n in ("node-a", "node-b", "node-c")] == \
        [(0, 0, 0), (3, 30, 150), (7, 70, 350)]
    assert rows["node-c"].total - rows["node-a"].total == 350


def test_a_failing_prioritize_is_ignored_even_when_not_ignorable_and_the_answer_says_so(ext: FakeExtender) -> None:
    ext.policy = Policy(status={"prioritize": 500})
    state = make_state(_three(), [make_pod("p", cpu="1", priority=HIGH)])
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url))))
    assert plan.outcome == "fits"
    assert set(plan.candidates) == {"node-a", "node-b", "node-c"}
    assert plan.notes == (f"extender {ext.url} (prioritize) failed, so the scheduler scores without it: failed "
                          f"prioritize with extender at URL {ext.url}/prioritize, code 500",)


# -- errors ----------------------------------------------------------------------------------------
def test_an_extender_that_fails_is_an_error_for_the_pod_unless_ignorable(ext: FakeExtender) -> None:
    ext.policy = Policy(status={"filter": 503})
    state = make_state(_three(), [make_pod("p", cpu="1", priority=HIGH)])
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url))))
    error = f"failed filter with extender at URL {ext.url}/filter, code 503"
    assert (plan.outcome, plan.victims) == ("infeasible", ())
    assert plan.message.startswith(f"{error}; a scheduler extender failed: the scheduler fails the pod with this error")
    exp = explain_pod(state, state.pod("default/p"), profiles=_profiles(_config(ext.url)))
    assert (exp.schedulable, exp.message, exp.preemption_message) == (False, error, None)
    ignorable = _profiles(_config(ext.url, ignorable=True))
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=ignorable))
    assert plan.outcome == "fits"
    assert plan.notes[0] == (f"extender {ext.url} (filter) failed and is ignorable, so the scheduler skips it: "
                             f"{error}")


def test_an_unreachable_extender_fails_the_pod_with_gos_words() -> None:
    url = f"http://127.0.0.1:{closed_port()}/scheduler"
    state = make_state(_three(), [make_pod("p", cpu="1", priority=HIGH)])
    exp = explain_pod(state, state.pod("default/p"), profiles=_profiles(_config(url)))
    host = url.split("/")[2]
    assert exp.message == f'Post "{url}/filter": dial tcp {host}: connect: connection refused'


def test_an_extender_slower_than_its_http_timeout_has_timed_out(ext: FakeExtender) -> None:
    ext.policy = Policy(delay={"filter": 2.0})
    state = make_state(_three(), [make_pod("p", cpu="1", priority=HIGH)])
    exp = explain_pod(state, state.pod("default/p"), profiles=_profiles(_config(ext.url, httpTimeout="200ms")))
    assert exp.message == (f'Post "{ext.url}/filter": context deadline exceeded (Client.Timeout exceeded while '
                           "awaiting headers)")


def test_an_error_in_the_filter_answer_fails_the_pod_with_that_text(ext: FakeExtender) -> None:
    ext.policy = Policy(error={"filter": "license server down"})
    state = make_state(_three(), [make_pod("p", cpu="1", priority=HIGH)])
    exp = explain_pod(state, state.pod("default/p"), profiles=_profiles(_config(ext.url)))
    assert exp.message == "license server down"


def test_ignorable_extenders_are_called_after_the_others(ext: FakeExtender) -> None:
    with running_extender(Policy(deny={"node-a": "second says no"})) as other:
        doc = _config(ext.url, ignorable=True)
        doc["extenders"].append({"urlPrefix": other.url, "filterVerb": "filter"})
        ext.policy = Policy(deny={"node-b": "first says no"})
        state = make_state(_three(), [make_pod("p", cpu="1", priority=HIGH)])
        plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(doc)))
        assert plan.node == "node-c"
        # The non-ignorable one saw every node; the ignorable one only what it kept.
        assert [n["metadata"]["name"] for n in other.requests[0][1]["Nodes"]["items"]] == ["node-a", "node-b", "node-c"]
        assert [n["metadata"]["name"] for n in ext.requests[0][1]["Nodes"]["items"]] == ["node-b", "node-c"]


# -- preemption ------------------------------------------------------------------------------------
def _full() -> list:
    """Two full nodes, each with one low-priority pod that must go for p; node-a's victim is the
    cheaper one (priority 0 against 100)."""
    return [make_node("node-a", cpu="2"), make_node("node-b", cpu="2"),
            make_pod("cheap", node="node-a", cpu="2", priority=0),
            make_pod("dearer", node="node-b", cpu="2", priority=100)]


def test_the_preempt_extender_vets_the_victims_and_its_veto_moves_the_plan(ext: FakeExtender) -> None:
    n1, n2, cheap, dearer = _full()
    state = make_state([n1, n2], [cheap, dearer, make_pod("p", cpu="2", priority=HIGH)])
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url))))
    assert (plan.outcome, plan.node, [v.pod.name for v in plan.victims]) == ("evict", "node-a", ["cheap"])
    body = next(b for v, b in ext.requests if v == "preempt")
    assert body["NodeNameToMetaVictims"] is None
    assert {n: ([p["metadata"]["name"] for p in v["Pods"]], v["NumPDBViolations"])
            for n, v in body["NodeNameToVictims"].items()} == {"node-a": (["cheap"], 0), "node-b": (["dearer"], 0)}
    ext.policy = Policy(no_preempt=["node-a"])
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url))))
    assert (plan.outcome, plan.node, [v.pod.name for v in plan.victims]) == ("evict", "node-b", ["dearer"])
    assert ("node-a", "the scheduler's preempt extenders left this node out") in \
        [(r.node, r.reason) for r in plan.runners_up]


def test_a_cache_capable_extender_vets_victims_by_uid_and_a_protected_pod_is_never_evicted(ext: FakeExtender) -> None:
    n1, n2, cheap, dearer = _full()
    state = make_state([n1, n2], [cheap, dearer, make_pod("p", cpu="2", priority=HIGH)])
    ext.policy = Policy(protect=[cheap.uid])
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url,
                                                                                          nodeCacheCapable=True))))
    body = next(b for v, b in ext.requests if v == "preempt")
    assert body["NodeNameToVictims"] is None
    assert body["NodeNameToMetaVictims"]["node-a"] == {"Pods": [{"UID": cheap.uid}], "NumPDBViolations": 0}
    assert (plan.node, [v.pod.name for v in plan.victims]) == ("node-b", ["dearer"])


def test_a_failing_preempt_extender_stops_the_eviction_plan(ext: FakeExtender) -> None:
    n1, n2, cheap, dearer = _full()
    state = make_state([n1, n2], [cheap, dearer, make_pod("p", cpu="2", priority=HIGH)])
    ext.policy = Policy(status={"preempt": 500})
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url))))
    assert (plan.outcome, plan.victims) == ("infeasible", ())
    assert plan.message.startswith(f"preemption: failed preempt with extender at URL {ext.url}/preempt, code 500; ")
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url, ignorable=True))))
    assert (plan.outcome, plan.node) == ("evict", "node-a")


# -- the CLI ---------------------------------------------------------------------------------------
@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Iterator[Run]:
    def run(*args: str) -> Result:
        return run_cli(monkeypatch, *args)

    yield run
    reset_env()


def test_offline_an_extender_that_answers_is_called_and_bind_never_is(cli: Run, ext: FakeExtender,
                                                                      tmp_path: Path) -> None:
    ext.policy = Policy(deny={"node-a": "nope"}, scores={"node-b": 10})
    cluster = write(tmp_path, _three(), [make_pod("p", "shop", cpu="1", priority=HIGH)])
    cfg = tmp_path / "sched.json"
    cfg.write_text(json.dumps(_config(ext.url, bindVerb="bind")))
    res = cli("plan", "shop/p", "--snapshot", cluster, "--scheduler-config", str(cfg), "-o", "json")
    plan = json.loads(res.stdout)
    assert (res.exit_code, plan["node"], plan.get("warnings", [])) == (0, "node-b", [])
    assert set(ext.verbs()) == {"filter", "prioritize"}


def test_the_schedulers_own_preemption_is_vetted_too(ext: FakeExtender) -> None:
    n1, n2, cheap, dearer = _full()
    state = make_state([n1, n2], [cheap, dearer, make_pod("p", cpu="2", priority=HIGH)])
    exp = explain_pod(state, state.pod("default/p"), profiles=_profiles(_config(ext.url)))
    assert exp.preemption_message is None  # it preempts
    assert exp.notes[-1].startswith("the scheduler's own preemption can make room")
    ext.policy = Policy(no_preempt=["node-a", "node-b"])
    exp = explain_pod(state, state.pod("default/p"), profiles=_profiles(_config(ext.url)))
    assert (exp.message, exp.preemption_message) == ("0/2 nodes are available: 2 Insufficient cpu.",
                                                     "no candidate node for preemption")
    ext.policy = Policy(status={"preempt": 500})
    exp = explain_pod(state, state.pod("default/p"), profiles=_profiles(_config(ext.url)))
    assert (exp.preemption_message, exp.post_filter_error) == (
        None, f"preemption: failed preempt with extender at URL {ext.url}/preempt, code 500")


def test_nodes_answered_whole_are_scored_without_their_pods_as_the_scheduler_scores_them(ext: FakeExtender) -> None:
    state = make_state([make_node("node-a"), make_node("node-b")], [
        make_pod("busy", node="node-a", cpu="3", memory="6Gi"), make_pod("p", cpu="1", memory="1Gi", priority=HIGH)])
    doc = _config(ext.url)
    del doc["extenders"][0]["prioritizeVerb"]
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(doc)))
    # HTTPExtender.Filter builds fresh NodeInfos from the returned Nodes: busy's requests are not seen.
    assert plan.candidates == ("node-a", "node-b")
    cached = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url,
                                                                                            nodeCacheCapable=True))))
    assert (cached.node, cached.candidates) == ("node-b", ("node-b",))


def test_a_skipped_ignorable_preempt_extender_is_named_in_the_plan(ext: FakeExtender) -> None:
    n1, n2, cheap, dearer = _full()
    state = make_state([n1, n2], [cheap, dearer, make_pod("p", cpu="2", priority=HIGH)])
    ext.policy = Policy(status={"preempt": 502})
    plan = plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url, ignorable=True))))
    assert plan.notes == (f"extender {ext.url} (preempt) failed and is ignorable, so the scheduler skips it: failed "
                          f"preempt with extender at URL {ext.url}/preempt, code 502",)


def test_a_filter_extenders_verdicts_are_each_pods_own_not_its_shapes(ext: FakeExtender) -> None:
    from kresched.plan.queue import plan_pending

    n1, n2, cheap, dearer = _full()
    p1, p2 = make_pod("p1", cpu="2", priority=HIGH), make_pod("p2", cpu="2", priority=HIGH)
    state = make_state([n1, n2], [cheap, dearer, p1, p2])
    doc = _config(ext.url)
    del doc["extenders"][0]["preemptVerb"]

    def answer(verb: str, args: dict) -> tuple[int, object]:
        names = [n["metadata"]["name"] for n in args["Nodes"]["items"]]
        banned = {"p1": "node-a", "p2": "node-b"}[args["Pod"]["metadata"]["name"]]
        return 200, {"Nodes": {"items": [n for n in args["Nodes"]["items"] if n["metadata"]["name"] != banned]},
                     "FailedAndUnresolvableNodes": {banned: "not for this pod"} if banned in names else {}}

    ext.answer = answer  # type: ignore[method-assign]
    pods = [state.pod("default/p1"), state.pod("default/p2")]
    plans = plan_pending(state, pods, PlanOptions(profiles=_profiles(doc)))
    assert [(p.outcome, p.node) for p in plans] == [("evict", "node-b"), ("evict", "node-a")]


# -- TLS -------------------------------------------------------------------------------------------
TLS = Path(__file__).parent / "fixtures" / "extenders" / "tls"


def _b64(name: str) -> str:
    import base64

    return base64.b64encode((TLS / name).read_bytes()).decode()


def _https_fits(url: str, **fields: object) -> str:
    """The message of `explain` for a pod that fits when the extender answers (it denies nothing):
    "" on success, else the scheduler's error."""
    state = make_state([make_node("node-a"), make_node("node-b")], [make_pod("p", cpu="1", priority=HIGH)])
    exp = explain_pod(state, state.pod("default/p"), profiles=_profiles(_config(url, **fields)))
    return exp.message or ""


def test_https_without_a_ca_is_not_verified_with_enable_https_and_verified_with_the_ca() -> None:
    with running_extender(tls=(str(TLS / "server.pem"), str(TLS / "server-key.pem"), None)) as ext:
        assert _https_fits(ext.url, enableHTTPS=True) == ""
        assert _https_fits(ext.url, tlsConfig={"caData": _b64("ca.pem")}) == ""
        assert _https_fits(ext.url, tlsConfig={"caFile": str(TLS / "ca.pem")}) == ""
        # The server's certificate names extender.test too: serverName picks the name checked.
        assert _https_fits(ext.url, tlsConfig={"caData": _b64("ca.pem"), "serverName": "extender.test"}) == ""
        # No TLS configuration: the system's roots, which do not know the test CA.
        assert _https_fits(ext.url).startswith(f'Post "{ext.url}/filter": tls: ')
        assert _https_fits(ext.url, tlsConfig={"caData": _b64("ca.pem"), "serverName": "other.test"}).startswith(
            f'Post "{ext.url}/filter": tls: ')


def test_a_client_certificate_is_sent_from_data_or_files() -> None:
    with running_extender(tls=(str(TLS / "server.pem"), str(TLS / "server-key.pem"), str(TLS / "ca.pem"))) as ext:
        assert _https_fits(ext.url, tlsConfig={"caData": _b64("ca.pem"), "certData": _b64("client.pem"),
                                               "keyData": _b64("client-key.pem")}) == ""
        assert _https_fits(ext.url, tlsConfig={"insecure": True, "certFile": str(TLS / "client.pem"),
                                               "keyFile": str(TLS / "client-key.pem")}) == ""
        refused = _https_fits(ext.url, tlsConfig={"caData": _b64("ca.pem")})
        assert refused.startswith(f'Post "{ext.url}/filter": ')


def test_the_pod_and_nodes_are_sent_as_the_scheduler_sends_them(ext: FakeExtender) -> None:
    state = make_state(_three(), [make_pod("p", cpu="1", priority=HIGH, labels={"app": "web"})])
    plan_pod(state, state.pod("default/p"), PlanOptions(profiles=_profiles(_config(ext.url))))
    _, body = ext.requests[0]
    pod, node = body["Pod"], body["Nodes"]["items"][0]
    # Objects from an informer carry no kind; the fields are the API's.
    assert ("kind" in pod, "kind" in node) == (False, False)
    assert (pod["metadata"]["labels"], pod["spec"]["containers"][0]["resources"]["requests"]["cpu"]) == \
        ({"app": "web"}, "1")
    assert (node["metadata"]["name"], node["status"]["allocatable"]["cpu"]) == ("node-a", "4")


def test_live_an_unreachable_extender_is_an_error_for_the_pods_it_manages_offline_a_warning(
        cli: Run, fake_api, fake_kubeconfig: Path, tmp_path: Path) -> None:
    port = closed_port()
    url = f"http://127.0.0.1:{port}/scheduler"
    state = make_state(_three(), [make_pod("gpu", "shop", cpu="1", priority=HIGH, limits={"example.com/gpu": "1"}),
                                  make_pod("plain", "shop", cpu="1", priority=HIGH)])
    fake_api.load(state)
    cluster = write(tmp_path, list(state.nodes), list(state.pods))
    cfg = tmp_path / "sched.json"
    cfg.write_text(json.dumps(_config(url, managedResources=[{"name": "example.com/gpu",
                                                              "ignoredByScheduler": True}])))
    live = ("--kubeconfig", str(fake_kubeconfig), "--scheduler-config", str(cfg), "-o", "json")
    res = cli("explain", "shop/gpu", *live)
    refused = f'Post "{url}/filter": dial tcp 127.0.0.1:{port}: connect: connection refused'
    assert json.loads(res.stdout)["message"] == refused
    res = cli("explain", "shop/plain", *live)
    assert (json.loads(res.stdout)["schedulable"], json.loads(res.stdout).get("warnings")) == (True, None)
    offline = ("--snapshot", cluster, "--scheduler-config", str(cfg), "-o", "json")
    gpu = json.loads(cli("explain", "shop/gpu", *offline).stdout)
    assert gpu["schedulable"] is True
    assert gpu["warnings"] == [f"scheduler extender {url} (filter, prioritize, preempt): kresched could not reach it "
                               f"(dial tcp 127.0.0.1:{port}: connect: connection refused), so it does not call it; the "
                               "scheduler may answer differently"]
    assert "warnings" not in json.loads(cli("explain", "shop/plain", *offline).stdout)


def test_a_tls_configuration_that_cannot_be_used_is_refused_before_anything_is_read(cli: Run, tmp_path: Path) -> None:
    cfg = tmp_path / "sched.json"
    cfg.write_text(json.dumps(_config("https://127.0.0.1:1/x", tlsConfig={"caFile": str(tmp_path / "missing.pem")})))
    res = cli("plan", "shop/p", "--snapshot", "demo", "--scheduler-config", str(cfg))
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: --scheduler-config {cfg}: extenders[0].tlsConfig: cannot load the CA: ")
    assert "Traceback" not in res.stderr
