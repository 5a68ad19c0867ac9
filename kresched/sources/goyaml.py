"""YAML as Go reads and writes it: the dialect of kubectl, the API server and every Go tool.

They all go through sigs.k8s.io/yaml, which is go-yaml v2 (`go.yaml.in/yaml/v2`): a plain scalar's
type is decided by `resolve()` in its resolve.go, not by YAML 1.1's rules, which PyYAML follows.
The two disagree both ways:

- PyYAML reads `=` (YAML 1.1's "value" key) and `<<` as values it cannot construct, `0x_` as an
  integer it then fails to parse, `.5_` and `1:20` as numbers, where Go reads strings (and kubectl
  writes them bare, since for Go they need no quotes);
- Go reads `y`, `n`, `on`, `08` (a float: not octal), `1e3`, `0o17` as booleans and numbers where
  PyYAML writes them bare, believing them strings.

`Loader` resolves plain scalars exactly as go-yaml v2 does; `dump` quotes every string that either
Go or PyYAML would read as something else, so what kresched writes reads back identically in
kubectl and in Python. One deliberate difference: a timestamp (`2026-01-02`) stays the string it
is written as, where Go makes a `time.Time` of it; kresched parses times where it needs them.
No I/O.
"""

from __future__ import annotations

import functools
import math
import re
import struct
from typing import Any

import yaml

__all__ = ["dump", "go_tag", "loader"]

_STR = "tag:yaml.org,2002:str"
_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"

#: go-yaml v2's `resolveMap`: the plain scalars it looks up before anything else.
_TRUE = frozenset({"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"})
_FALSE = frozenset({"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"})
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_SPECIAL_FLOATS = {".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan,
                   ".inf": math.inf, ".Inf": math.inf, ".INF": math.inf,
                   "+.inf": math.inf, "+.Inf": math.inf, "+.INF": math.inf,
                   "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf}
#: `strconv.ParseInt(s, 0, 64)` (and `ParseUint`): a sign, then 0x, 0o, 0b, a leading 0 (octal) or decimal.
_GO_INT = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
#: `yamlStyleFloat`, then `strconv.ParseFloat`.
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
#: What `strconv.ParseFloat` accepts of a scalar starting with `.`: decimal digits, an exponent.
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")
#: `parseTimestamp`'s quick check (4 digits and a dash), then `time.Parse` of four layouts.
_TIMESTAMP_RE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
                           r"([Tt ][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})?)?")
#: The encoder's `isBase60Float`: quoted on the way out "for compatibility with other parsers".
_BASE60 = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_INT64_MIN, _UINT64_MAX = -(2**63), 2**64 - 1


def _go_int(plain: str) -> int | None:
    """`strconv.ParseInt(plain, 0, 64)`, else `ParseUint`, as go-yaml v2 tries them; None on error."""
    m = _GO_INT.fullmatch(plain)
    if m is None:
        return None
    sign, body = m.groups()
    n = int(body, 8) if body[0] == "0" and len(body) > 1 and body[1].isdigit() else int(body, 0)
    n = -n if sign == "-" else n
    if _INT64_MIN <= n <= _UINT64_MAX and not (sign and n > 2**63 - 1):  # ParseUint takes no sign
        return n
    return None


def go_tag(value: str) -> str:
    """The tag go-yaml v2's `resolve("", value)` gives a plain scalar (timestamps included)."""
    if not value:
        return _NULL
    first = value[0]
    if first in "yYnNtTfFoO~":
        if value in _TRUE or value in _FALSE:
            return _BOOL
        return _NULL if value in _NULLS else _STR
    if first == ".":
        if value in _SPECIAL_FLOATS:
            return _FLOAT
        return _FLOAT if _DOT_FLOAT.fullmatch(value) else _STR
    if first in "+-0123456789":
        if value in _SPECIAL_FLOATS:
            return _FLOAT
        if _TIMESTAMP_RE.fullmatch(value):
            return _TIMESTAMP
        plain = value.replace("_", "")
        if _go_int(plain) is not None:
            return _INT
        if _YAML_FLOAT.fullmatch(plain) and math.isfinite(float(plain)):
            return _FLOAT  # (its `0b` fallbacks come after: ParseInt above already reads 0b)
        return _STR
    if value == "<<":
        return _MERGE  # a merge key where it is a key; the string "<<" where it is a value
    return _STR


def _construct_bool(loader: Any, node: Any) -> bool:
    return loader.construct_scalar(node) in _TRUE


def _construct_int(loader: Any, node: Any) -> Any:
    text = loader.construct_scalar(node)
    n = _go_int(text.replace("_", ""))
    if n is None:
        raise yaml.constructor.ConstructorError(None, None, f"cannot decode !!str `{text}` as a !!int",
                                                node.start_mark)
    return n


def _construct_float(loader: Any, node: Any) -> float | int:
    """A float; a whole one below 1e21 as the integer it is: sigs.k8s.io/yaml hands Go's JSON
    decoder `8` for `08` and `1000` for `1e3`, which an integer field takes."""
    text = loader.construct_scalar(node)
    special = _SPECIAL_FLOATS.get(text)
    value = special if special is not None else float(text.replace("_", ""))
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def _key_text(key: Any) -> Any:
    """sigs.k8s.io/yaml's `convertToJSONableObject`: a key that resolved to a bool or a number is
    the string Go formats it as (`n:` is the key "false"); anything else is left for the decoder
    to refuse."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _float32_text(key)
    return key


def _float32_text(value: float) -> str:
    """`strconv.FormatFloat(value, 'g', -1, 32)` (the shortest decimal that reads back as the same
    float32; exponent form below 1e-4 and from 1e6), with go-yaml's names for the special values."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    f32 = _to_float32(value)
    for precision in range(9):
        text = f"{f32:.{precision}e}"
        if _to_float32(float(text)) == f32:
            break
    mantissa, exp = text.split("e")
    exponent = int(exp)
    sign = "-" if mantissa.startswith("-") else ""
    digits = mantissa.lstrip("-").replace(".", "")
    if exponent < -4 or exponent >= 6:
        fraction = f".{digits[1:]}" if len(digits) > 1 else ""
        return f"{sign}{digits[0]}{fraction}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{sign}{digits}{'0' * (point - len(digits))}"
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _to_float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def _construct_merge_value(loader: Any, node: Any) -> str:
    """`<<` where it is a value, not a key: the string (go-yaml merges only under a key)."""
    return loader.construct_scalar(node)


@functools.cache
def loader(strict: bool = False) -> type:
    """A PyYAML loader (libyaml's where there is one) that reads plain scalars as Go does.
    `strict`: a key given twice in one mapping is an error, as in go-yaml's `UnmarshalStrict`
    (what the API machinery's strict decoding — kube-scheduler's `--config` — uses); otherwise the
    last one wins, as in `Unmarshal`."""
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    def resolve(self: Any, kind: Any, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            tag = go_tag(value)
            return _STR if tag == _TIMESTAMP else tag
        return base.resolve(self, kind, value, implicit)

    def construct_mapping(self: Any, node: Any, deep: bool = False) -> dict[Any, Any]:
        if strict:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE:
                    if key_node.value in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"key {key_node.value!r} already set in map", key_node.start_mark)
                    seen.add(key_node.value)
        mapping = base.construct_mapping(self, node, deep)
        for key in [k for k in mapping if type(k) is not str]:
            mapping[_key_text(key)] = mapping.pop(key)
        return mapping

    cls = type("GoStrictLoader" if strict else "GoLoader", (base,),
               {"resolve": resolve, "construct_mapping": construct_mapping,
                "yaml_constructors": dict(base.yaml_constructors)})
    cls.add_constructor(_BOOL, _construct_bool)
    cls.add_constructor(_INT, _construct_int)
    cls.add_constructor(_FLOAT, _construct_float)
    cls.add_constructor(_MERGE, _construct_merge_value)
    return cls


@functools.cache
def _dumper() -> type:
    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    def resolve(self: Any, kind: Any, value: str, implicit: tuple[bool, bool]) -> str:
        """The tag a plain scalar would be read as: PyYAML's own where it is not a string, else
        Go's (a base-60 float counted as a float, as go-yaml's encoder quotes it). The emitter
        quotes a string whenever this is not `str`."""
        tag = base.resolve(self, kind, value, implicit)
        if kind is not yaml.ScalarNode or not implicit[0] or tag != _STR:
            return tag
        go = go_tag(value)
        return _FLOAT if go == _STR and _BASE60.fullmatch(value) else go

    def represent_str(self: Any, data: str) -> Any:
        """A string of several lines as a literal block (`|`), as go-yaml's encoder writes it;
        PyYAML falls back to quoting where a block cannot hold it (trailing spaces, tabs)."""
        if "\n" in data:
            return self.represent_scalar(_STR, data, style="|")
        return self.represent_scalar(_STR, data)

    dumper = type("GoDumper", (base,), {"resolve": resolve,
                                        "yaml_representers": dict(base.yaml_representers)})
    dumper.add_representer(str, represent_str)
    return dumper


def dump(data: Any) -> str:
    """Block-style YAML, keys in the order given, that Go and PyYAML both read back as `data`."""
    return yaml.dump(data, Dumper=_dumper(), sort_keys=False, default_flow_style=False, allow_unicode=True)
