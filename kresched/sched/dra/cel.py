"""Device selectors: CEL in the Kubernetes v1.36 device environment (k8s.io/dynamic-resource-allocation/cel).

Owns: compiling a selector expression once (`compile_selector`, cached), evaluating it on one
device (`CompiledSelector.matches`), the `device` variable a selector sees (`DeviceView`), and the
qualified attribute names (`qualify_attributes`). Errors are `CelError`s whose text is what the
scheduler puts after `CEL compile error: ` / `CEL runtime error: `. Must not do I/O.

The evaluator is cel-expr-python (Google's wrapper of cel-cpp, the reference C++ runtime), with a
compatibility layer for what Kubernetes adds on top of standard CEL:
- `device` is a `map(string, dyn)`: `device.<name>` other than driver, attributes, capacity and
  allowMultipleAllocations is refused at compile time with upstream's `undefined field '<name>'`.
- A missing domain reads as an empty map (upstream's `newStringInterfaceMapWithDefault`), so
  `device.attributes["x"].a` fails with `no such key: a` and `has(...)` is false. The source is
  rewritten before compiling: `device.attributes[D]` becomes `dyn(device.attributes[?D].orValue({}))`
  (and `device.attributes.d` likewise). A domain map reached another way (e.g. the whole of
  `device.attributes` bound by `cel.bind`) reports a missing domain as `no such key: <domain>`.
- Semver and Quantity values are tagged maps (`{true: b"1.2.3-rc.1"}`, `{false: "3/2"}`: the
  canonical version without build metadata; the exact value as a fraction), so `==` compares
  them as upstream does (blang's Equals; Quantity.Cmp == 0). Their functions are Python overloads:
  semver(s[, normalize]), isSemver(s[, normalize]), major, minor, patch, isGreaterThan,
  isLessThan, compareTo; quantity(s), isQuantity(s), sign(q), isInteger, asInteger,
  asApproximateFloat, add and sub (quantity or int), isGreaterThan, isLessThan, compareTo.
- The Kubernetes list library (isSorted, sum, min, max, indexOf, lastIndexOf) and regex library
  (find, findAll; Python's `re` stands in for Go's RE2 there, `matches` is cel-cpp's RE2).
- cel-cpp's extensions as the API server enables them: strings (v2), sets, lists, bindings
  (`cel.bind`), optional types, two-variable comprehensions.

Not supported, each refused at compile time with a message naming it (never a wrong answer):
the URL, IP, CIDR and Format libraries (`url`, `isURL`, `ip`, `isIP`, `cidr`, `isCIDR`,
`format.*`), `transformMap`/`transformMapEntry` (broken in cel-cpp 0.1.3), comparisons between
int, uint and double *literals* typed statically (`1 < 2.0`; values read from attributes compare
across types at run time as upstream), and list-type attributes (DRAListTypeAttributes is off in
v1.36: such an attribute fails every selector with `unsupported attribute value`, as upstream).
Differences that only change which error is reported: a Semver or Quantity compared with `==` to
another type is false (upstream: no such overload); `"1" + semver(...)`-style misuse is caught at
run time, not at compile time; heterogeneous list literals are accepted.

Cost limits are NOT enforced: upstream stops an evaluation past 1,000,000 cost units
(`CELSelectorExpressionMaxCost`), and the API server refuses to store a selector whose estimated
cost exceeds that, so such a selector can only come from a hand-made snapshot; kresched then
evaluates it to the end. Evaluation cannot be interrupted (upstream's filter timeout).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache

from cel_expr_python import cel

from kresched.model.dra import DeviceAttribute
from kresched.model.quantity import InvalidQuantity, parse_quantity

__all__ = [
    "BadAttribute",
    "CelError",
    "CompiledSelector",
    "DeviceView",
    "Semver",
    "attribute_value",
    "compile_selector",
    "parse_qualified_name",
    "qualify_attributes",
    "qualify_capacity",
]


class CelError(Exception):
    """A selector that does not compile or fails on a device; `str(e)` is upstream's detail."""


# --- Semantic versions, parsed as github.com/blang/semver/v4 does ---------------------------

_NUMBERS = frozenset("0123456789")
_ALPHANUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-0123456789")
_UINT64_MAX = 2**64 - 1


@dataclass(frozen=True, order=False)
class Semver:
    """A version attribute's value: blang/semver's Version (strict parsing, `Semver.parse`)."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        """`semver.Parse` (or the semver library's `normalizeAndParse`); ValueError with blang's words."""
        if normalize:
            text = _normalize_semver(text)
        return _parse_semver(text)

    def __str__(self) -> str:
        out = self.canonical
        return out + "+" + ".".join(self.build) if self.build else out

    @property
    def canonical(self) -> str:
        """The version without build metadata: equal strings ⇔ blang's `Equals`."""
        out = f"{self.major}.{self.minor}.{self.patch}"
        return out + "-" + ".".join(str(p) for p in self.pre) if self.pre else out

    def compare(self, other: Semver) -> int:
        """blang's `Compare`: -1, 0 or 1; build metadata is ignored."""
        for a, b in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if a != b:
                return 1 if a > b else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for a, b in zip(self.pre, other.pre, strict=False):
            if a != b:
                if isinstance(a, int) != isinstance(b, int):
                    return -1 if isinstance(a, int) else 1  # numeric identifiers sort first
                return 1 if a > b else -1  # type: ignore[operator]
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))


def _uint(text: str, what: str) -> int:
    if any(c not in _NUMBERS for c in text):
        raise ValueError(f"Invalid character(s) found in {what} number {_go_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise ValueError(f"{what.capitalize()} number must not contain leading zeroes {_go_quote(text)}")
    return _parse_uint64(text)


def _parse_uint64(text: str) -> int:
    if not text:
        raise ValueError('strconv.ParseUint: parsing "": invalid syntax')
    value = int(text)
    if value > _UINT64_MAX:
        raise ValueError(f"strconv.ParseUint: parsing {_go_quote(text)}: value out of range")
    return value


def _parse_semver(text: str) -> Semver:
    if not text:
        raise ValueError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise ValueError("No Major.Minor.Patch elements found")
    major = _uint(parts[0], "major")
    minor = _uint(parts[1], "minor")
    patch_text, build, pre = parts[2], [], []
    if "+" in patch_text:
        patch_text, _, rest = patch_text.partition("+")
        build = rest.split(".")
    if "-" in patch_text:
        patch_text, _, rest = patch_text.partition("-")
        pre = rest.split(".")
    patch = _uint(patch_text, "patch")
    pre_values: list[int | str] = []
    for item in pre:
        if not item:
            raise ValueError("Prerelease is empty")
        if all(c in _NUMBERS for c in item):
            if len(item) > 1 and item[0] == "0":
                raise ValueError(f"Numeric PreRelease version must not contain leading zeroes {_go_quote(item)}")
            pre_values.append(_parse_uint64(item))
        elif all(c in _ALPHANUM for c in item):
            pre_values.append(item)
        else:
            raise ValueError(f"Invalid character(s) found in prerelease {_go_quote(item)}")
    for item in build:
        if not item:
            raise ValueError("Build meta data is empty")
        if any(c not in _ALPHANUM for c in item):
            raise ValueError(f"Invalid character(s) found in build meta data {_go_quote(item)}")
    return Semver(major, minor, patch, tuple(pre_values), tuple(build))


def _normalize_semver(text: str) -> str:
    """The semver library's `normalizeAndParse` before parsing: no `v`, no leading zeroes, x.y.z."""
    parts = text.removeprefix("v").split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            if not part or part[0] not in _NUMBERS:
                part = "0" + part
            parts[i] = part
    if len(parts) < 3:
        if any(c in "+-" for c in parts[-1]):
            raise ValueError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- The device a selector sees ------------------------------------------------------------


@dataclass(frozen=True)
class BadAttribute:
    """An attribute upstream cannot convert: every selector on its device fails with `detail`."""

    detail: str


AttributeValue = bool | int | str | Semver | BadAttribute


@dataclass(frozen=True, eq=False)
class DeviceView:
    """What a selector sees of one device (upstream's `cel.Device`, names already qualified).

    `attributes`: domain -> id -> bool, int, str, Semver (or a BadAttribute);
    `capacity`: domain -> id -> a quantity: its text as the API serves it (`"80Gi"`), an int or
    an exact Fraction. Compared by identity: the evaluated form is built once and kept on it.
    """

    driver: str
    attributes: Mapping[str, Mapping[str, AttributeValue]]
    capacity: Mapping[str, Mapping[str, str | int | Fraction]]
    allow_multiple_allocations: bool = False
    _activation: list = field(default_factory=list, init=False, repr=False, compare=False)


def parse_qualified_name(name: str, default_domain: str) -> tuple[str, str]:
    """Upstream's `parseQualifiedName`: `domain/id` splits at the first `/`, else the driver's domain."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (default_domain, name)


def attribute_value(name: str, attr: object) -> AttributeValue:
    """An API `DeviceAttribute` (`{"int": 1}`, `{"version": "1.0.0"}`, ...) as `getAttributeValue`
    converts it; a value already converted is returned as it is."""
    if isinstance(attr, DeviceAttribute):  # as kresched.model.dra decodes it
        if not attr.is_list:
            for value in (attr.int_, attr.bool_, attr.string):
                if value is not None:
                    return value
            if attr.version is not None:
                try:
                    return Semver.parse(attr.version)
                except ValueError as e:
                    return BadAttribute(f"attribute {name}: parse semantic version: {e}")
        return BadAttribute(f"attribute {name}: unsupported attribute value")
    if not isinstance(attr, Mapping):
        return attr  # type: ignore[return-value]
    for key in ("int", "bool", "string"):
        if attr.get(key) is not None:
            return attr[key]
    if attr.get("version") is not None:
        try:
            return Semver.parse(attr["version"])
        except ValueError as e:
            return BadAttribute(f"attribute {name}: parse semantic version: {e}")
    return BadAttribute(f"attribute {name}: unsupported attribute value")


def qualify_attributes(driver: str, raw: Mapping[str, object]) -> dict[str, dict[str, AttributeValue]]:
    """A device's attributes by domain and id (values as `attribute_value` converts them)."""
    out: dict[str, dict[str, AttributeValue]] = {}
    for name, value in raw.items():
        domain, ident = parse_qualified_name(name, driver)
        out.setdefault(domain, {})[ident] = attribute_value(name, value)
    return out


def qualify_capacity(driver: str, raw: Mapping[str, object]) -> dict[str, dict[str, str | int | Fraction]]:
    """A device's capacity by domain and id; an API `DeviceCapacity` (`{"value": "80Gi"}`) gives its value."""
    out: dict[str, dict[str, str | int | Fraction]] = {}
    for name, value in raw.items():
        domain, ident = parse_qualified_name(name, driver)
        out.setdefault(domain, {})[ident] = value["value"] if isinstance(value, Mapping) else value  # type: ignore[assignment]
    return out


# --- Semver and Quantity as CEL values -----------------------------------------------------
# A tagged map: {true: canonical version bytes} / {false: "num" or "num/den"}. Distinct static
# types (map(bool, bytes), map(bool, string)) so that `semver("1.0.0")` alone is reported as
# upstream reports it.

_SEMVER_TYPE = cel.Type.Map(cel.Type.BOOL, cel.Type.BYTES)
_QUANTITY_TYPE = cel.Type.Map(cel.Type.BOOL, cel.Type.STRING)
_TYPE_NAMES = {"MAP<BOOL, BYTES>": "kubernetes.Semver", "MAP<BOOL, STRING>": "kubernetes.Quantity"}
_SEMVERS: dict[bytes, Semver] = {}
_QUANTITIES: dict[str, Fraction] = {}


def _semver_value(version: Semver) -> dict:
    key = version.canonical.encode()
    _SEMVERS.setdefault(key, version)
    return {True: key}


def _quantity_value(value: Fraction) -> dict:
    key = str(value.numerator) if value.denominator == 1 else f"{value.numerator}/{value.denominator}"
    _QUANTITIES.setdefault(key, value)
    return {False: key}


def _as_semver(value: object) -> Semver | None:
    if isinstance(value, dict) and len(value) == 1 and isinstance(key := value.get(True), bytes | bytearray):
        key = bytes(key)  # cel-cpp hands bytes back as a bytearray
        return _SEMVERS.get(key) or _SEMVERS.setdefault(key, _parse_semver(key.decode()))
    return None


def _as_quantity(value: object) -> Fraction | None:
    if isinstance(value, dict) and len(value) == 1 and isinstance(key := value.get(False), str):
        return _QUANTITIES.get(key) or _QUANTITIES.setdefault(key, Fraction(key))
    return None


def _no_overload(name: str) -> ValueError:
    return ValueError(f"no such overload: {name}")


@lru_cache(maxsize=1024)
def _semver(text: str, normalize: bool = False) -> dict:
    return _semver_value(Semver.parse(text, normalize))


def _is_semver(text: str, normalize: bool = False) -> bool:
    try:
        Semver.parse(text, normalize)
    except ValueError:
        return False
    return True


@lru_cache(maxsize=1024)
def _quantity(text: str) -> dict:
    try:
        return _quantity_value(parse_quantity(text))
    except InvalidQuantity as e:
        detail = str(e).split(": ", 1)[-1]
        if detail != "out of range":
            raise ValueError(detail) from None
    return _quantity_value(_huge_quantity(text))


_DECIMAL_EXPONENTS = {"": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def _huge_quantity(text: str) -> Fraction:
    """A well-formed decimal quantity of 10^40 or more, which kresched's parser refuses but
    upstream's inf.Dec holds exactly (`quantity("9999999999999999999999999999999999999G")`)."""
    number, suffix = re.fullmatch(r"([+-]?[0-9.]+)(.*)", text).groups()  # type: ignore[union-attr]
    exponent = _DECIMAL_EXPONENTS.get(suffix)
    if exponent is None:
        exponent = int(suffix[1:])
    return Fraction(number) * Fraction(10) ** exponent


def _is_quantity(text: str) -> bool:
    try:
        parse_quantity(text)
    except InvalidQuantity:
        return False
    return True


def _compare(name: str) -> Callable[[object, object], int]:
    def compare(a: object, b: object) -> int:
        if (va := _as_semver(a)) is not None and (vb := _as_semver(b)) is not None:
            return va.compare(vb)
        if (qa := _as_quantity(a)) is not None and (qb := _as_quantity(b)) is not None:
            return (qa > qb) - (qa < qb)
        raise _no_overload(name)

    return compare


_cmp_greater, _cmp_less, _cmp_to = _compare("isGreaterThan"), _compare("isLessThan"), _compare("compareTo")


def _semver_part(name: str, index: int) -> Callable[[object], int]:
    def part(value: object) -> int:
        version = _as_semver(value)
        if version is None:
            raise _no_overload(name)
        return (version.major, version.minor, version.patch)[index]

    return part


def _quantity_arg(name: str, value: object) -> Fraction:
    q = _as_quantity(value)
    if q is None:
        raise _no_overload(name)
    return q


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _q_int(value: object) -> int | None:
    q = _quantity_arg("asInteger", value)
    return int(q) if q.denominator == 1 and _INT64_MIN <= q <= _INT64_MAX else None


def _as_integer(value: object) -> int:
    result = _q_int(value)
    if result is None:
        raise ValueError("cannot convert value to integer")
    return result


def _arith(name: str, sign: int) -> Callable[[object, object], dict]:
    def op(a: object, b: object) -> dict:
        qa = _quantity_arg(name, a)
        if isinstance(b, int) and not isinstance(b, bool):
            return _quantity_value(qa + sign * b)
        return _quantity_value(qa + sign * _quantity_arg(name, b))

    return op


# --- The Kubernetes list and regex libraries ------------------------------------------------


def _sort_key(name: str, items: list) -> list:
    if not items:
        return []
    if all(_as_semver(x) is not None for x in items):
        return [_SemverKey(_as_semver(x)) for x in items]
    if all(_as_quantity(x) is not None for x in items):
        return [_as_quantity(x) for x in items]
    kinds = {bool if isinstance(x, bool) else (int if isinstance(x, int | float) else type(x)) for x in items}
    if len(kinds) != 1 or kinds.pop() not in (bool, int, str, bytes):
        raise _no_overload(name)
    return items


class _SemverKey:
    __slots__ = ("v",)

    def __init__(self, v: Semver | None) -> None:
        self.v = v

    def __lt__(self, other: _SemverKey) -> bool:
        return self.v.compare(other.v) < 0  # type: ignore[union-attr]

    def __gt__(self, other: _SemverKey) -> bool:
        return self.v.compare(other.v) > 0  # type: ignore[union-attr]


def _is_sorted(items: list) -> bool:
    keys = _sort_key("isSorted", items)
    return all(not keys[i] > keys[i + 1] for i in range(len(keys) - 1))


def _extreme(name: str, pick_later: Callable[[object, object], bool]) -> Callable[[list], object]:
    def extreme(items: list) -> object:
        if not items:
            raise ValueError(f"{name} called on empty list")
        keys = _sort_key(name, items)
        best = 0
        for i in range(1, len(items)):
            if pick_later(keys[best], keys[i]):
                best = i
        return items[best]

    return extreme


def _sum(items: list) -> object:
    if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
        total = sum(items)
        if not _INT64_MIN <= total <= _INT64_MAX:
            raise ValueError("integer overflow")
        return total
    if all(isinstance(x, int | float) and not isinstance(x, bool) for x in items):
        return float(sum(items))
    raise _no_overload("sum")


def _index_of(items: list, item: object) -> int:
    return next((i for i, x in enumerate(items) if _cel_equal(x, item)), -1)


def _last_index_of(items: list, item: object) -> int:
    return next((i for i in range(len(items) - 1, -1, -1) if _cel_equal(items[i], item)), -1)


def _cel_equal(a: object, b: object) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern:
    try:
        return re.compile(pattern)
    except re.error as e:
        raise ValueError(f"Illegal regex: {e}") from None


def _find(text: str, pattern: str) -> str:
    m = _regex(pattern).search(text)
    return m.group(0) if m else ""


def _find_all(text: str, pattern: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    found = [m.group(0) for m in _regex(pattern).finditer(text)]
    return found if n < 0 else found[:n]


# --- The environment -----------------------------------------------------------------------

_T = cel.Type
_EXTENSIONS = """extensions:
  - name: "strings"
    version: 2
  - name: "sets"
  - name: "lists"
    version: "latest"
  - name: "bindings"
  - name: "optional"
  - name: "two-var-comprehensions"
"""


def _member(name: str, result: cel.Type, params: list, impl: Callable, oid: str | None = None) -> cel.FunctionDecl:
    return cel.FunctionDecl(name, [cel.Overload(oid or f"kresched_{name}", result, params, is_member=True, impl=impl)])


def _library() -> cel.CelExtension:
    dyn, lst = _T.DYN, _T.List(_T.DYN)
    b, i, s = _T.BOOL, _T.INT, _T.STRING
    o = cel.Overload
    decls = [
        cel.FunctionDecl("semver", [o("string_to_semver", _SEMVER_TYPE, [s], impl=_semver),
                                    o("string_bool_to_semver", _SEMVER_TYPE, [s, b], impl=_semver)]),
        cel.FunctionDecl("isSemver", [o("is_semver_string", b, [s], impl=_is_semver),
                                      o("is_semver_string_bool", b, [s, b], impl=_is_semver)]),
        cel.FunctionDecl("quantity", [o("string_to_quantity", _QUANTITY_TYPE, [s], impl=_quantity)]),
        cel.FunctionDecl("isQuantity", [o("is_quantity_string", b, [s], impl=_is_quantity)]),
        cel.FunctionDecl("sign", [o("quantity_sign", i, [dyn], impl=lambda q: _sign(q))]),
        _member("isGreaterThan", b, [dyn, dyn], lambda x, y: _cmp_greater(x, y) > 0),
        _member("isLessThan", b, [dyn, dyn], lambda x, y: _cmp_less(x, y) < 0),
        _member("compareTo", i, [dyn, dyn], _cmp_to),
        _member("major", i, [dyn], _semver_part("major", 0)),
        _member("minor", i, [dyn], _semver_part("minor", 1)),
        _member("patch", i, [dyn], _semver_part("patch", 2)),
        _member("isInteger", b, [dyn], lambda q: _q_int(q) is not None),
        _member("asInteger", i, [dyn], _as_integer),
        _member("asApproximateFloat", _T.DOUBLE, [dyn], lambda q: float(_quantity_arg("asApproximateFloat", q))),
        _member("add", _QUANTITY_TYPE, [dyn, dyn], _arith("add", 1)),
        _member("sub", _QUANTITY_TYPE, [dyn, dyn], _arith("sub", -1)),
        _member("isSorted", b, [lst], _is_sorted),
        _member("sum", dyn, [lst], _sum),
        _member("min", dyn, [lst], _extreme("min", lambda best, x: best > x)),
        _member("max", dyn, [lst], _extreme("max", lambda best, x: best < x)),
        _member("indexOf", i, [lst, dyn], _index_of, "list_index_of"),
        _member("lastIndexOf", i, [lst, dyn], _last_index_of, "list_last_index_of"),
        cel.FunctionDecl("find", [o("string_find", s, [s, s], is_member=True, impl=_find)]),
        cel.FunctionDecl("findAll", [o("string_find_all", _T.List(s), [s, s], is_member=True, impl=_find_all),
                                     o("string_find_all_n", _T.List(s), [s, s, i], is_member=True, impl=_find_all)]),
    ]
    return cel.CelExtension("kresched.kubernetes", decls)


def _sign(value: object) -> int:
    q = _quantity_arg("sign", value)
    return (q > 0) - (q < 0)


@lru_cache(maxsize=1)
def _env() -> cel.Env:
    return cel.NewEnv(config=cel.NewEnvConfigFromYaml(_EXTENSIONS),
                      variables={"device": _T.Map(_T.STRING, _T.DYN)}, extensions=[_library()])


# --- Source checks and the missing-domain rewrite -------------------------------------------

_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?
               (?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"|'(?:\\.|[^\\'\n])*'|"(?:\\.|[^\\"\n])*"))
  | (?P<number>0[xX][0-9a-fA-F]+[uU]?|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?[uU]?|\.\d+(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<punct>.)
""", re.VERBOSE | re.DOTALL)
_DEVICE_FIELDS = frozenset({"driver", "attributes", "capacity", "allowMultipleAllocations"})
_DOMAIN_MAPS = frozenset({"attributes", "capacity"})
_OPEN, _CLOSE = "([{", ")]}"
#: Functions of upstream's libraries that kresched's runtime lacks: refused by name.
_UNSUPPORTED = {
    "url": "URL", "isURL": "URL", "ip": "IP", "isIP": "IP", "cidr": "CIDR", "isCIDR": "CIDR",
    "format": "Format", "authorizer": "Authz", "jsonpatch": "JSONPatch",
}
_BROKEN = {"transformMap", "transformMapEntry"}


def _tokens(source: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) of each token but spaces and comments."""
    out = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup or "punct"
        if kind != "space":
            out.append((kind, m.group(), m.start()))
    return out


def _position(source: str, offset: int) -> str:
    line = source.count("\n", 0, offset) + 1
    return f"{line}:{offset - (source.rfind(chr(10), 0, offset) + 1) + 1}"


def _check_and_rewrite(source: str) -> str:
    """Refuse what the runtime would get wrong; rewrite missing-domain lookups (module docstring)."""
    toks = _tokens(source)
    text = [t[1] for t in toks]

    def at(i: int) -> str:
        return text[i] if 0 <= i < len(text) else ""

    edits: list[tuple[int, int, str]] = []
    for i, (kind, word, offset) in enumerate(toks):
        if kind != "ident":
            continue
        if word in _BROKEN and at(i - 1) == "." and at(i + 1) == "(":
            raise CelError(f"compilation failed: ERROR: <input>:{_position(source, offset)}: "
                           f"function '{word}' is not supported by kresched's CEL runtime")
        if word != "device" or at(i - 1) == "." or at(i + 1) != "." or not at(i + 2).isidentifier():
            continue
        member = at(i + 2)
        if member not in _DEVICE_FIELDS and at(i + 3) != "(":
            raise CelError(f"compilation failed: ERROR: <input>:{_position(source, toks[i + 1][2])}: "
                           f"undefined field '{member}'")
        if member not in _DOMAIN_MAPS:
            continue
        # dyn(...): the checker would otherwise give `orValue({})` a free type parameter.
        if at(i + 3) == "[" and at(i + 4) != "?":
            close = _matching(text, i + 3)
            if close is not None:
                edits.append((offset, offset, "dyn("))
                edits.append((toks[i + 3][2] + 1, toks[i + 3][2] + 1, "?"))
                end = toks[close][2] + 1
                edits.append((end, end, ".orValue({}))"))
        elif (at(i + 3) == "." and i + 4 < len(toks) and toks[i + 4][0] == "ident" and at(i + 5) != "("
              and not (at(i - 1) == "(" and at(i - 2) == "has" and at(i + 5) == ")")):
            start, end = toks[i + 3][2], toks[i + 4][2] + len(text[i + 4])
            edits.append((offset, offset, "dyn("))
            edits.append((start, end, f'[?"{text[i + 4]}"].orValue({{}}))'))
    for start, end, new in sorted(edits, reverse=True):
        source = source[:start] + new + source[end:]
    return source


def _matching(text: list[str], open_index: int) -> int | None:
    depth = 0
    for j in range(open_index, len(text)):
        if text[j] in _OPEN:
            depth += 1
        elif text[j] in _CLOSE:
            depth -= 1
            if depth == 0:
                return j
    return None


# --- Compiling and evaluating --------------------------------------------------------------

_STATUS = re.compile(r"^(?:INVALID_ARGUMENT|NOT_FOUND|OUT_OF_RANGE|UNKNOWN|INTERNAL|UNIMPLEMENTED|"
                     r"FAILED_PRECONDITION|ALREADY_EXISTS|CANCELLED|RESOURCE_EXHAUSTED): |\s*\[[A-Z_]+\]$")
_KEY_NOT_FOUND = re.compile(r'Key not found in map\s*: "?(.*?)"?$')
_UNDECLARED = re.compile(r"undeclared reference to '([A-Za-z_]+)'")


def _detail(message: str) -> str:
    return _STATUS.sub("", _STATUS.sub("", message.strip()))


def _runtime_detail(message: str) -> str:
    """cel-cpp's words in cel-go's, where a scheduler message would differ."""
    detail = _detail(message)
    if m := _KEY_NOT_FOUND.search(detail):
        return f"no such key: {m.group(1)}"
    if detail == "divide by zero":
        return "division by zero"
    if detail.startswith("No matching overloads found"):
        return "no such overload"
    return detail


def _type_name(t: cel.Type) -> str:
    name = t.name()
    if name in _TYPE_NAMES:
        return _TYPE_NAMES[name]
    return name.lower().replace("<", "(").replace(">", ")")


class CompiledSelector:
    """One compiled selector; `matches` evaluates it on a device."""

    __slots__ = ("_program", "expression")

    def __init__(self, expression: str, program: cel.Expression) -> None:
        self.expression = expression
        self._program = program

    def matches(self, device: DeviceView) -> bool:
        """Whether the device satisfies the selector; CelError with upstream's runtime detail."""
        try:
            result = self._program.eval(_activation(device))
        except RuntimeError as e:  # a value cel-cpp cannot take (the caller broke DeviceView's types)
            raise CelError(_runtime_detail(str(e))) from None
        value = result.value()
        if value is True or value is False:
            return value
        if result.type() == _T.ERROR:
            raise CelError(_runtime_detail(str(value)))
        name = _type_name(result.type())
        raise CelError(f"CEL result of type {name} could not be converted to bool")


def compile_selector(expression: str) -> CompiledSelector:
    """The expression compiled in the device environment, once per expression (cached)."""
    result = _compile(expression)
    if isinstance(result, CelError):
        raise CelError(str(result))  # a fresh one: the cached error must not collect tracebacks
    return result


@lru_cache(maxsize=4096)
def _compile(expression: str) -> CompiledSelector | CelError:
    env = _env()
    try:
        checked = env.compile(expression)
    except RuntimeError as e:
        detail = _detail(str(e))
        for name in dict.fromkeys(_UNDECLARED.findall(detail)):
            if name in _UNSUPPORTED:
                return CelError(f"compilation failed: the Kubernetes {_UNSUPPORTED[name]} library "
                                f"('{name}') is not supported by kresched's CEL runtime: {detail}")
        return CelError(f"compilation failed: {detail}")
    out = checked.return_type()
    if out != _T.BOOL and out != _T.DYN:
        return CelError(f"must evaluate to bool or the unknown type, not {_type_name(out)}")
    try:
        rewritten = _check_and_rewrite(expression)
        program = checked if rewritten == expression else env.compile(rewritten)
    except CelError as e:
        return e
    except RuntimeError as e:  # the rewrite broke something the original did not: a kresched bug
        return CelError(f"unexpected compilation error: {_detail(str(e))}")
    return CompiledSelector(expression, program)


def _activation(device: DeviceView) -> cel.Activation:
    cached = device._activation
    if cached:
        if isinstance(cached[0], CelError):
            raise CelError(str(cached[0]))
        return cached[0]
    try:
        value = _env().Activation({"device": _device_value(device)})
    except CelError as e:
        cached.append(e)
        raise
    cached.append(value)
    return value


def _device_value(device: DeviceView) -> dict:
    attributes: dict[str, dict] = {}
    for domain, values in device.attributes.items():
        converted = attributes[domain] = {}
        for ident, value in values.items():
            if isinstance(value, Semver):
                value = _semver_value(value)
            elif isinstance(value, BadAttribute):
                raise CelError(value.detail)
            converted[ident] = value
    capacity: dict[str, dict] = {}
    for domain, values in device.capacity.items():
        converted = capacity[domain] = {}
        for ident, value in values.items():
            try:
                exact = value if isinstance(value, Fraction) else parse_quantity(str(value))
            except InvalidQuantity as e:
                raise CelError(f"capacity {domain}/{ident}: {e}") from None
            converted[ident] = _quantity_value(exact)
    return {"driver": device.driver, "allowMultipleAllocations": device.allow_multiple_allocations,
            "attributes": attributes, "capacity": capacity}
