"""Hostile snapshot input: every case ends in one `error:` line on stderr naming the input, exit 2,
within bounded time and memory — or, for a file that is merely odd, in a normal result.

Cases that could crash (SIGSEGV), hang (a FIFO) or eat memory (an alias bomb, a gzip bomb,
`/dev/zero`) run `python -m kresched` in a subprocess under an address-space cap
(`resource.setrlimit` in a `preexec_fn`) and a timeout, so a regression fails the test instead
of taking the test run down with it.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import resource
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest

from kresched.errors import ExitCode
from kresched.sources.decode import json_error

#: The whole process (interpreter, kubernetes client imports, the input) stays under this.
MEMORY_CAP_BYTES = 1 << 30


@dataclass
class Proc:
    code: int
    stdout: bytes
    stderr: str


def kresched(*args: str, stdin: object = subprocess.DEVNULL, env: dict[str, str] | None = None,
             timeout: float = 60) -> Proc:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP_BYTES, MEMORY_CAP_BYTES))

    proc = subprocess.run([sys.executable, "-m", "kresched", *args], stdin=stdin, capture_output=True,
                          preexec_fn=cap, timeout=timeout, env={**os.environ, **(env or {})})
    return Proc(proc.returncode, proc.stdout, proc.stderr.decode(errors="replace"))


def one_error_line(p: Proc) -> str:
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: "), p.stderr
    assert "Traceback" not in p.stderr
    return lines[0]


#: A node to plan on: a snapshot of pods alone is refused (it names what is missing).
NODE = """apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "1", memory: 1Gi, pods: "10"}}
---
"""

POD = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers: [{name: main, image: nginx}]
"""


def test_yaml_nested_thirty_thousand_levels_is_refused_before_the_parser_recurses(tmp_path):
    # libyaml's composer recursed until the C stack overflowed: exit 139, no message.
    depth = 30_000
    path = tmp_path / "deep.yaml"
    path.write_text(POD + "  volumes:\n  - name: x\n    emptyDir: " + "[" * depth + "]" * depth + "\n")
    p = kresched("plan", "--snapshot", str(path), "-o", "json")
    assert p.code == ExitCode.USAGE
    line = one_error_line(p)
    # Where it is noticed depends on libyaml: from 0.2.5 its scanner, reading ahead, stops at 1,000
    # levels (column 1012) before the event walk reaches 513 (column 523).
    assert re.fullmatch(rf"error: {re.escape(str(path))}: objects and lists nested more than 512 levels deep "
                        r"\(at line 8, column (523|1012)\); no Kubernetes object is", line), line


def test_yaml_nested_just_beyond_the_limit_says_where(tmp_path):
    depth = 600  # deeper than kresched's 512, shallower than libyaml's own limit
    path = tmp_path / "deep.yaml"
    path.write_text(POD + "  volumes:\n  - name: x\n    emptyDir: " + "[" * depth + "]" * depth + "\n")
    p = kresched("plan", "--snapshot", str(path), "-o", "json")
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == (f"error: {path}: objects and lists nested more than 512 levels deep "
                                 "(at line 8, column 523); no Kubernetes object is")


@pytest.mark.parametrize("where", ["an ignored field", "emptyDir"])
def test_json_nested_beyond_the_limit_anywhere_is_one_error_line(tmp_path, where):
    nested = "[" * 5000 + "]" * 5000
    inner = f'"ignored": {nested}' if where == "an ignored field" else \
        f'"spec": {{"volumes": [{{"name": "x", "emptyDir": {{"x": {nested}}}}}]}}'
    path = tmp_path / "deep.json"
    path.write_text('{"kind": "Pod", "metadata": {"name": "web", "namespace": "shop"}, ' + inner + "}")
    p = kresched("plan", "--snapshot", str(path), "-o", "json")
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == (f"error: {path}: objects and lists nested more than 512 levels deep; "
                                 "no Kubernetes object is")


def test_a_named_pipe_nobody_writes_to_is_empty_at_once(tmp_path):
    fifo = tmp_path / "cluster.yaml"
    os.mkfifo(fifo)
    p = kresched("plan", "--snapshot", str(fifo), timeout=30)  # opening it plainly waits for a writer forever
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == (f"error: {fifo}: empty input: expected a Kubernetes List or objects (JSON or "
                                 "YAML)")


@pytest.mark.parametrize("flag", ["--snapshot", "-f", "--scheduler-config"])
def test_a_pipe_is_read_as_kubectl_reads_one(tmp_path, flag):
    """`<(helm template ...)` and `/dev/stdin` are pipes, read as kubectl reads them."""
    (tmp_path / "cluster.yaml").write_text(NODE + POD)
    (tmp_path / "job.yaml").write_text("apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: shop}\n"
                                       "spec:\n  template:\n    spec:\n      restartPolicy: Never\n"
                                       "      containers: [{name: c, image: busybox}]\n")
    (tmp_path / "sched.yaml").write_text("apiVersion: kubescheduler.config.k8s.io/v1\n"
                                         "kind: KubeSchedulerConfiguration\nprofiles: [{schedulerName: other}]\n")
    read = {"--snapshot": "cluster.yaml", "-f": "job.yaml", "--scheduler-config": "sched.yaml"}[flag]
    snapshot = "" if flag == "--snapshot" else "--snapshot cluster.yaml"
    proc = subprocess.run(["bash", "-c", f"{sys.executable} -m kresched plan {flag} <(cat {read}) {snapshot}"
                                         f"{' shop/web' if flag == '--scheduler-config' else ''} -o json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    if flag == "--scheduler-config":  # read: its one profile is not the pod's scheduler
        assert proc.returncode == ExitCode.INFEASIBLE, proc.stderr
        assert "is not a profile" in json.loads(proc.stdout)["message"]
    else:
        assert proc.returncode == ExitCode.OK, proc.stderr
        assert proc.stdout.lstrip().startswith(("{", "["))


def test_a_kubeconfig_pipe_reaches_the_cluster(fake_api, fake_kubeconfig, tmp_path):
    """`--kubeconfig <(vault read ...)`: a pipe can be read once, and kresched reads the kubeconfig
    twice (the context's namespace, then the connection): the second read must not find it empty."""
    command = f"{sys.executable} -m kresched snapshot --kubeconfig <(cat {fake_kubeconfig})"
    proc = subprocess.run(["bash", "-c", command], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == ExitCode.OK, proc.stderr
    assert json.loads(proc.stdout)["kind"] == "List"
    assert fake_api.calls("/api/v1/nodes")


def test_a_fifo_in_a_snapshot_directory_is_skipped(tmp_path):
    os.mkfifo(tmp_path / "a.yaml")
    (tmp_path / "b.yaml").write_text(NODE + POD)
    p = kresched("plan", "--snapshot", str(tmp_path), "-o", "json", timeout=30)
    assert p.code == ExitCode.OK, p.stderr


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_refused_as_a_file_and_on_stdin(device):
    p = kresched("plan", "--snapshot", device)
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == f"error: {device}: not a regular file (it is a character device); use '-' to " \
                                "read a stream from stdin"
    with open(device, "rb") as dev:
        p = kresched("plan", "--snapshot", "-", stdin=dev)
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == "error: <stdin>: is a character device, not a file or a pipe"


def test_an_endless_binary_stream_on_stdin_is_refused_after_its_first_chunk():
    # `cat /dev/zero | kresched plan -f -`: a pipe is a fine stdin, but NUL bytes are no JSON or YAML.
    with subprocess.Popen(["cat", "/dev/zero"], stdout=subprocess.PIPE) as cat:
        try:
            p = kresched("plan", "--snapshot", "-", stdin=cat.stdout)
        finally:
            cat.kill()
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == "error: <stdin>: binary data (a NUL byte), not JSON or YAML text"


def test_a_text_stream_beyond_the_input_limit_is_refused_and_the_limit_can_be_raised(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(NODE + POD + "#" * (2 << 20) + "\n")
    p = kresched("--max-input", "1Mi", "plan", "--snapshot", str(path))
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == (f"error: {path}: larger than 1 MiB; if it really is a snapshot, raise the limit "
                                 "with --max-input or KRESCHED_MAX_INPUT (e.g. KRESCHED_MAX_INPUT=8Gi)")
    with path.open("rb") as f:
        p = kresched("plan", "--snapshot", "-", stdin=f, env={"KRESCHED_MAX_INPUT": "1Mi"})
    assert one_error_line(p).startswith("error: <stdin>: larger than 1 MiB;")
    assert kresched("--max-input", "3Mi", "plan", "--snapshot", str(path), "-o", "json").code == ExitCode.OK


def test_a_gzip_bomb_is_stopped_at_the_limit_without_decompressing_it_whole(tmp_path):
    # 1.5 GiB of spaces behind a valid pod compress to about 1.5 MB; the cap is 1 GiB for the process.
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b" " * (64 << 20)
    parts = [comp.compress(POD.encode())] + [comp.compress(chunk) for _ in range(24)] + [comp.flush()]
    path = tmp_path / "bomb.yaml.gz"
    path.write_bytes(b"".join(parts))
    assert path.stat().st_size < 4 << 20
    p = kresched("plan", "--snapshot", str(path), env={"KRESCHED_MAX_INPUT": "256Mi"})
    assert p.code == ExitCode.USAGE
    assert one_error_line(p).startswith(f"error: {path}: larger than 256 MiB once decompressed; ")


def test_corrupt_and_truncated_gzip_are_one_error_line(tmp_path):
    data = gzip.compress(POD.encode())
    (tmp_path / "cut.yaml.gz").write_bytes(data[: len(data) // 2])
    (tmp_path / "tail.yaml.gz").write_bytes(data + b"garbage")
    assert one_error_line(kresched("plan", "--snapshot", str(tmp_path / "cut.yaml.gz"))) == (
        f"error: {tmp_path / 'cut.yaml.gz'}: corrupt gzip data: the compressed stream ends early")
    assert one_error_line(kresched("plan", "--snapshot", str(tmp_path / "tail.yaml.gz"))) == (
        f"error: {tmp_path / 'tail.yaml.gz'}: corrupt gzip data: trailing garbage after the compressed data")


ALIAS_BOMB = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers: [{name: main, image: nginx}]
  volumes:
  - name: scratch
    emptyDir:
      medium: ""
      a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
      b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
      c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
      d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
      e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
      f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
      g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
      h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
      i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def test_a_yaml_alias_bomb_in_a_subtree_kresched_does_not_use_costs_nothing(tmp_path):
    # It took 4.6 GB and wrote 2.4 GB: the emptyDir subtree was kept and written back expanded.
    path = tmp_path / "bomb.yaml"
    path.write_text(NODE + ALIAS_BOMB)
    assert path.stat().st_size < 1200
    p = kresched("snapshot", "--snapshot", str(path), "-o", "json")
    assert p.code == ExitCode.OK, p.stderr
    assert len(p.stdout) < 2000
    assert b'"emptyDir":{}' in p.stdout  # still an emptyDir (its data is lost on eviction)


def test_latin1_bytes_inside_a_json_string_name_the_byte_and_where(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"kind": "Pod",\n "metadata": {"name": "caf\xe9", "namespace": "shop"}}')
    p = kresched("plan", "--snapshot", str(path))
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == f"error: {path}: malformed JSON: not UTF-8: byte 0xe9 at line 2, column 27"


@pytest.mark.parametrize(("name", "data", "expected"), [
    pytest.param("latin1.json", b'{"kind": "Deployment",\n "metadata": {"name": "caf\xe9"}}',
                 "malformed JSON: not UTF-8: byte 0xe9 at line 2, column 27", id="JSON"),
    pytest.param("latin1.yaml", b"kind: Deployment\nmetadata:\n  name: caf\xe9\n",
                 "not UTF-8 text (JSON or YAML expected): byte 0xe9 at line 3, column 12", id="YAML"),
])
def test_latin1_bytes_in_a_what_if_manifest_name_the_byte_and_where(tmp_path, name, data, expected):
    path = tmp_path / name
    path.write_bytes(data)
    p = kresched("plan", "-f", str(path), "--snapshot", "demo")
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == f"error: {path}: {expected}"


@pytest.mark.parametrize("exc", [
    pytest.param(msgspec.DecodeError("Invalid UTF-8 encoded string"), id="msgspec 0.23 and later"),
    pytest.param(UnicodeDecodeError("utf-8", b"caf\xe9", 3, 4, "invalid continuation byte"), id="msgspec up to 0.22"),
])
def test_a_json_string_that_is_not_utf8_is_named_by_byte_with_every_msgspec_the_range_allows(exc):
    # Whichever msgspec is installed, both of the ways msgspec has said "not UTF-8" read the same.
    data = b'{"kind": "Pod",\n "metadata": {"name": "caf\xe9"}}'
    assert json_error(exc, data) == "not UTF-8: byte 0xe9 at line 2, column 27"


def test_a_full_disk_on_stdout_is_one_error_line():
    with open("/dev/full", "wb") as full:
        p = subprocess.run([sys.executable, "-m", "kresched", "snapshot", "--snapshot", "demo", "-o", "json"],
                           stdout=full, stderr=subprocess.PIPE, timeout=60)
    stderr = p.stderr.decode()
    assert p.returncode == ExitCode.ERROR
    assert stderr.splitlines() == ["error: cannot write the output: No space left on device"], stderr


def test_an_unreadable_max_input_is_a_usage_error(tmp_path):
    p = kresched("--max-input", "lots", "plan", "--snapshot", "demo")
    assert p.code == ExitCode.USAGE
    assert one_error_line(p) == "error: KRESCHED_MAX_INPUT='lots': not a byte size (use e.g. 4Gi, 500Mi)"


def _fifo(d: Path) -> str:
    os.mkfifo(d / "fifo")
    return str(d / "fifo")


def _sparse_20mib(d: Path) -> str:
    (d / "big").touch()
    os.truncate(d / "big", 20 << 20)
    return str(d / "big")


@pytest.mark.parametrize(("make", "expected"), [
    pytest.param(lambda d: "/dev/zero", ": not a regular file (it is a character device)", id="/dev/zero"),
    pytest.param(_fifo, " sets no current-context: pass --context (it has no contexts)",
                 id="a FIFO nobody writes to: empty at once"),
    pytest.param(_sparse_20mib, ": larger than 16 MiB; not read (a kubeconfig is kilobytes)", id="a file of 20 MiB"),
])
@pytest.mark.parametrize("how", ["--kubeconfig", "KUBECONFIG"])
def test_an_endless_or_huge_kubeconfig_is_refused_unread_in_one_line(tmp_path, make, expected, how):
    # /dev/zero was read to the end: 7.5 GiB, then a MemoryError; a FIFO hung.
    path = make(tmp_path)
    if how == "KUBECONFIG":
        p = kresched("explain", "web", env={**os.environ, "KUBECONFIG": path}, timeout=30)
    else:
        p = kresched("plan", "--kubeconfig", path, timeout=30)
    assert p.code == ExitCode.CLUSTER_ACCESS
    assert one_error_line(p) == f"error: kubeconfig {path}{expected}"


def test_a_directory_given_as_kubeconfig_says_so(tmp_path):
    p = kresched("plan", "--kubeconfig", str(tmp_path))
    assert p.code == ExitCode.CLUSTER_ACCESS
    assert one_error_line(p) == f"error: kubeconfig {tmp_path}: is a directory, not a file"


def test_a_kubeconfig_whose_clusters_is_not_a_list_names_the_field(tmp_path):
    path = tmp_path / "config"
    path.write_text("apiVersion: v1\nkind: Config\nclusters: {a: b}\ncontexts: [{name: c, context: {cluster: a, "
                    "user: u}}]\nusers: []\ncurrent-context: c\n")
    p = kresched("plan", "--kubeconfig", str(path))
    assert p.code == ExitCode.CLUSTER_ACCESS
    assert one_error_line(p) == f"error: invalid kubeconfig {path}: clusters: expected a list, got a mapping"




#: Malformed kubeconfigs (issue 38): each is one `error:` line naming the file, exit 5 — before
#: kresched reads the cluster's name for its summaries as after.
_KUBECONFIG_HEAD = "apiVersion: v1\nkind: Config\n"
_A_CONTEXT = "contexts: [{name: c, context: {cluster: a, user: u}}]\ncurrent-context: c\n"
MALFORMED_KUBECONFIGS = [
    pytest.param(_KUBECONFIG_HEAD.encode() + b"clusters: 5\n" + _A_CONTEXT.encode(),
                 "clusters: expected a list, got a number", id="clusters is a number"),
    pytest.param(_KUBECONFIG_HEAD.encode() + b"contexts: 5\ncurrent-context: c\n",
                 "contexts: expected a list, got a number", id="contexts is a number"),
    pytest.param(_KUBECONFIG_HEAD.encode() + b"contexts: {a: b}\ncurrent-context: c\n",
                 "contexts: expected a list, got a mapping", id="contexts is a mapping"),
    pytest.param(_KUBECONFIG_HEAD.encode() + b"users: hello\n" + _A_CONTEXT.encode(),
                 "users: expected a list, got a string", id="users is a string"),
    pytest.param(_KUBECONFIG_HEAD.encode() + b"clusters: [5]\n" + _A_CONTEXT.encode(),
                 "clusters[0]: expected a mapping, got a number", id="a cluster is a number"),
    pytest.param(_KUBECONFIG_HEAD.encode() + b"contexts: [{name: [c], context: {cluster: a}}]\ncurrent-context: c\n",
                 "contexts[0].name: expected a string", id="a context's name is a list"),
    pytest.param(_KUBECONFIG_HEAD.encode() + b"current-context: [c]\n" + b"contexts: [{name: c, context: {}}]\n",
                 "current-context: expected a string, got a list", id="current-context is a list"),
    pytest.param(_KUBECONFIG_HEAD.encode() + b"contexts: [{name: c, context: {cluster: [a], user: u}}]\n"
                 b"current-context: c\n", "contexts[0].context.cluster: expected a string, got a list",
                 id="a context's cluster is a list"),
    pytest.param(_KUBECONFIG_HEAD.encode() + b"clusters: [{name: a, cluster: {server: 6443}}]\n" + _A_CONTEXT.encode(),
                 "clusters[0].cluster.server: expected a string, got a number", id="a server is a number"),
    pytest.param(bytes(range(128, 256)) * 4, "not UTF-8 text", id="binary garbage"),
    pytest.param(b"\xff\xfe" + "clusters: 5\n".encode("utf-16-le"), "not UTF-8 text", id="UTF-16"),
    pytest.param(b"clusters: " + b"[" * 30_000 + b"]" * 30_000 + b"\n", "nested", id="nested 30,000 levels"),
    pytest.param(b"- a\n- list\n", "not a kubeconfig", id="a list"),
    pytest.param(b"clusters: [\n", "malformed YAML", id="malformed YAML"),
]


@pytest.mark.parametrize(("content", "needle"), MALFORMED_KUBECONFIGS)
def test_a_malformed_kubeconfig_is_one_error_line_naming_it(tmp_path, content, needle):
    path = tmp_path / "config"
    path.write_bytes(content)
    for args in (("plan",), ("rebalance", "--dry-run"), ("untaint", "--dry-run")):
        p = kresched(*args, "--kubeconfig", str(path))
        line = one_error_line(p)
        assert p.code == ExitCode.CLUSTER_ACCESS, (args, p.stderr)
        assert str(path) in line, line
        assert needle in line, line
        assert "unexpected" not in line


def test_a_server_url_with_an_invalid_scheme_is_kresched_s_own_one_line_only(tmp_path):
    """urllib3 would guess a scheme for `ht!tp://[::1` and warn (a FutureWarning) before failing:
    kresched refuses it as kubectl does (client-go cannot parse it), in one line."""
    path = tmp_path / "config"
    path.write_text(_KUBECONFIG_HEAD + "clusters: [{name: a, cluster: {server: 'ht!tp://[::1'}}]\n"
                    "users: [{name: u, user: {token: t}}]\n" + _A_CONTEXT)
    p = kresched("plan", "--kubeconfig", str(path))
    line = one_error_line(p)
    assert p.code == ExitCode.CLUSTER_ACCESS
    assert "ht!tp://[::1" in line
    assert "FutureWarning" not in p.stderr
