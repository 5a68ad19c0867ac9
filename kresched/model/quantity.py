"""Kubernetes resource quantities, parsed exactly as apimachinery's `resource.ParseQuantity`.

Owns: turning `"100m"`, `"1.5Gi"`, `"12E6"` into exact integers in the unit the scheduler
compares (milli-CPU for `cpu`, whole units for everything else), rounding up as
`Quantity.MilliValue()` / `Quantity.Value()` do. Must not do I/O.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

__all__ = ["InvalidQuantity", "parse_quantity", "to_int", "format_cpu", "format_bytes"]


class InvalidQuantity(ValueError):
    """A string that apimachinery's ParseQuantity would reject."""


_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")


@lru_cache(maxsize=65536)
def parse_quantity(text: str) -> Fraction:
    """The exact value of a quantity string, following `parseQuantityString` step by step.

    Number: optional sign, digits, optional `.` and digits (`1.` and `.5` are accepted, as
    upstream does). Suffix: a binary (`Ki`..`Ei`) or decimal (`n u m k M G T P E`) suffix, or an
    exponent `e`/`E` followed by an optionally signed integer (`1e3`, `12E6`, `1E-3`). A lone `E`
    is exa, not an exponent.
    """
    if not isinstance(text, str) or not text:
        raise InvalidQuantity(f"invalid quantity {text!r}: quantities must match the regular expression"
                              " '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
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
        fstart = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        frac = text[fstart:pos]
    if not whole and not frac and (pos == start or text[start:pos] != "."):
        # No digits at all ("Ki", "+", "-m"): upstream's regular expression needs [0-9.]+.
        raise _bad(text)
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise _bad(text)
    suffix = text[suffix_start:end]
    multiplier = _multiplier(suffix, text)
    number = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
    value = number * multiplier
    return -value if negative else value


def _multiplier(suffix: str, text: str) -> Fraction:
    if suffix in _DECIMAL:
        return _DECIMAL[suffix]
    if suffix in _BINARY:
        return Fraction(_BINARY[suffix])
    if len(suffix) > 1 and suffix[0] in "eE":
        exponent = suffix[1:]
        digits = exponent[1:] if exponent[0] in "+-" else exponent
        if digits and all(c in _DIGITS for c in digits):
            return Fraction(10) ** int(exponent)
    raise InvalidQuantity(f"invalid quantity {text!r}: unable to parse quantity's suffix")


def _bad(text: str) -> InvalidQuantity:
    return InvalidQuantity(
        f"invalid quantity {text!r}: quantities must match the regular expression"
        " '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def _ceil(value: Fraction) -> int:
    # apimachinery rounds away from zero when it scales (RoundUp); requests are never negative.
    return -((-value.numerator) // value.denominator)


@lru_cache(maxsize=65536)
def _to_int(resource: str, text: str) -> int:
    value = parse_quantity(text)
    if resource == "cpu":
        value *= 1000
    return _ceil(value) if value >= 0 else -_ceil(-value)


def to_int(resource: str, raw: str | int | float) -> int:
    """`raw` in the scheduler's integer unit: milli-CPU for `cpu`, whole units otherwise.

    YAML written by hand gives numbers (`cpu: 1`, `cpu: 0.5`); they are read as their decimal text.
    """
    if not isinstance(raw, str):
        if isinstance(raw, bool):
            raise InvalidQuantity(f"invalid quantity {raw!r}")
        raw = repr(raw) if isinstance(raw, float) else str(raw)
    return _to_int(resource, raw)


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
