"""Kubernetes resource quantities, parsed exactly as apimachinery's `resource.ParseQuantity`.

Owns: turning `"100m"`, `"1.5Gi"`, `"12E6"` into exact integers in the unit the scheduler
compares (milli-CPU for `cpu`, whole units for everything else), rounding up as
`Quantity.MilliValue()` / `Quantity.Value()` do. Must not do I/O.

Upstream's parser has corners worth knowing (each one is a case in tests/test_quantity.py):
a number may have no digits at all (`"."`, `"+"`, `"Ki"`, `"e3"` are all zero), except where
upstream's slow path needs digits (`"Pi"`, `"Ei"`, `".e-10"` are errors); a lone `E` is exa,
not an exponent; `1K` is an error (only `k`); binary amounts are capped at 2^63-1; values are
rounded away from zero to a whole nano-unit. Deliberate differences, all where upstream would
silently overflow an int64 or where the input is absurd: values of 10^40 or more, integers
that do not fit an int64 once scaled (`to_int`), and numbers of more than 1000 significant
digits raise `InvalidQuantity` here.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

__all__ = ["InvalidQuantity", "parse_quantity", "to_int", "to_nano", "format_cpu", "format_bytes"]


class InvalidQuantity(ValueError):
    """A string that apimachinery's ParseQuantity would reject (or that overflows an int64)."""


_INT64_MAX = 2**63 - 1
_NANO = 10**9
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")

# Upstream's error texts (quantity.go), so that a message can be searched for.
_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_NUMERIC = "unable to parse numeric part of quantity"
_SUFFIX = "unable to parse quantity's suffix"


@lru_cache(maxsize=65536)
def parse_quantity(text: str) -> Fraction:
    """The value `resource.ParseQuantity(text)` holds, as an exact fraction.

    Follows `parseQuantityString` and `ParseQuantity` step by step: an optional sign, digits,
    an optional `.` and digits (`1.`, `.5` and even `.` are numbers), then a suffix that is
    binary (`Ki`..`Ei`), decimal (`n u m "" k M G T P E`) or an exponent (`e`/`E` and a signed
    integer, truncated to int32 as upstream does). Non-zero values are rounded away from zero
    to a whole nano-unit; binary values are capped at 2^63-1 in magnitude.
    """
    if not isinstance(text, str) or not text:
        raise InvalidQuantity(f"invalid quantity {text!r}: {_FORMAT}")
    end = len(text)
    pos = 0
    negative = False
    if text[0] in "+-":
        negative = text[0] == "-"
        pos = 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    whole = text[start:pos]
    frac = ""
    if pos < end and text[pos] == ".":
        pos += 1
        frac_start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        frac = text[frac_start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise InvalidQuantity(f"invalid quantity {text!r}: {_FORMAT}")
    binary, exponent = _interpret(text[suffix_start:], text)

    if not whole and not frac:
        # No digit at all: upstream's int64 fast path reads it as 0, but its inf.Dec slow path
        # (taken for exponents below nano and for Pi/Ei, whose fast path lacks precision) fails.
        if (binary and exponent >= 50) or (not binary and exponent < -9):
            raise InvalidQuantity(f"invalid quantity {text!r}: {_NUMERIC}")
        return Fraction(0)

    frac = frac.rstrip("0")
    digits = (whole + frac).lstrip("0")
    if not digits:
        return Fraction(0)
    if len(digits) > 1000:
        raise InvalidQuantity(f"invalid quantity {text!r}: too many digits")
    mantissa = int(digits)
    if binary:
        value = Fraction(mantissa << exponent, 10 ** len(frac))
    else:
        scale = exponent - len(frac)
        magnitude = scale + len(digits)  # 10**(magnitude-1) <= value < 10**magnitude
        if magnitude <= -9:
            value = Fraction(1, _NANO)  # below one nano-unit: rounds up to exactly 1n
        elif magnitude > 40:
            raise InvalidQuantity(f"invalid quantity {text!r}: out of range")
        else:
            value = Fraction(mantissa * 10**scale) if scale >= 0 else Fraction(mantissa, 10**-scale)
    if value.denominator != 1 and _NANO % value.denominator:
        value = Fraction(_ceil(value * _NANO), _NANO)  # inf.RoundUp at scale 9, on the magnitude
    if binary and value > _INT64_MAX:
        value = Fraction(_INT64_MAX)
    return -value if negative else value


def _interpret(suffix: str, text: str) -> tuple[bool, int]:
    """`quantitySuffixer.interpret`: (is binary, exponent of 2 or of 10)."""
    if suffix in _DECIMAL:
        return False, _DECIMAL[suffix]
    if suffix in _BINARY:
        return True, _BINARY[suffix]
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[2:] if suffix[1] in "+-" else suffix[1:]
        if digits and all(c in _DIGITS for c in digits):  # strconv.ParseInt(s[1:], 10, 64)
            exponent = int(suffix[1:])
            if -(2**63) <= exponent <= _INT64_MAX:
                return False, (exponent + 2**31) % 2**32 - 2**31  # int32(parsed), as upstream
    raise InvalidQuantity(f"invalid quantity {text!r}: {_SUFFIX}")


def _ceil(value: Fraction) -> int:
    return -((-value.numerator) // value.denominator)


@lru_cache(maxsize=65536)
def _to_int(resource: str, text: str) -> int:
    value = parse_quantity(text)
    if resource == "cpu":
        value *= 1000
    # MilliValue()/Value() round up; for negative amounts the int64 path rounds away from zero.
    amount = _ceil(value) if value >= 0 else -_ceil(-value)
    if abs(amount) > _INT64_MAX:
        unit = "milli-units" if resource == "cpu" else "units"
        raise InvalidQuantity(f"invalid quantity {text!r}: out of range (more than 2^63-1 {unit})")
    return amount


def to_int(resource: str, raw: str | int | float) -> int:
    """`raw` in the scheduler's integer unit: milli-CPU for `cpu` (`MilliValue()`), whole units
    (bytes, counts) otherwise (`Value()`), rounded up.

    `raw` is a value as decoded from JSON or YAML: surrounding whitespace is ignored, as
    `Quantity.UnmarshalJSON` does, and numbers (`cpu: 1`, `cpu: 0.5`) are read as their text.
    """
    return _to_int(resource, _text(raw))


@lru_cache(maxsize=65536)
def _to_nano(text: str) -> int:
    return int(parse_quantity(text) * _NANO)


def to_nano(raw: str | int | float) -> int:
    """The exact parsed amount in nano-units (every parsed quantity is a whole number of them):
    for comparing quantities exactly, as `Quantity.Cmp` does (QoS compares requests to limits)."""
    return _to_nano(_text(raw))


def _text(raw: str | int | float) -> str:
    if isinstance(raw, str):
        return raw.strip()
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise InvalidQuantity(f"invalid quantity {raw!r}: expected a string or a number")
    return repr(raw) if isinstance(raw, float) else str(raw)


def format_cpu(milli: int) -> str:
    """`1500` → `1.5`, `250` → `250m` (how operators write CPU)."""
    if milli % 1000 == 0:
        return str(milli // 1000)
    if milli >= 1000:
        return f"{milli / 1000:.2f}".rstrip("0").rstrip(".")
    return f"{milli}m"


def format_bytes(n: int) -> str:
    """Bytes in the largest binary unit that keeps one decimal: `1.5Gi`, `512Mi`, `0`."""
    for unit, size in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if abs(n) >= size:
            value = n / size
            text = f"{value:.1f}".rstrip("0").rstrip(".")
            return f"{text}{unit}"
    return str(n)
