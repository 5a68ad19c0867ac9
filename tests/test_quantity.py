"""`parse_quantity` / `to_int` against apimachinery's `resource.ParseQuantity` + `MilliValue()` / `Value()`.

Most rows are upstream's own table (staging/src/k8s.io/apimachinery/pkg/api/resource/quantity_test.go,
`TestQuantityParse` and its invalid list); the others are the corners of `parseQuantityString` and
`ParseQuantity` (numbers without digits, where the inf.Dec slow path fails, the int32 exponent).
Every expected value here was also checked against the Go code itself (the same functions built
outside this repository), including ~380,000 random strings over the quantity alphabet: all agree,
except the deliberate differences at the end of this file.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from kresched.model.quantity import InvalidQuantity, format_bytes, format_cpu, parse_quantity, to_int, to_nano

GI = 2**30
INT64_MAX = 2**63 - 1

# (input, exact value upstream holds, MilliValue() for cpu, Value() for everything else)
VALID = [
    # zeros in every form
    ("0", "0", 0, 0),
    ("00", "0", 0, 0),
    ("0.0", "0", 0, 0),
    ("+0", "0", 0, 0),
    ("-0", "0", 0, 0),
    ("0n", "0", 0, 0),
    ("0u", "0", 0, 0),
    ("0m", "0", 0, 0),
    ("0k", "0", 0, 0),
    ("0M", "0", 0, 0),
    ("0T", "0", 0, 0),
    ("0Ki", "0", 0, 0),
    ("0Mi", "0", 0, 0),
    ("0Gi", "0", 0, 0),
    ("0Ei", "0", 0, 0),
    # plain numbers
    ("1", "1", 1000, 1),
    ("9", "9", 9000, 9),
    ("+1", "1", 1000, 1),
    ("129M", "129000000", 129_000_000_000, 129_000_000),
    # decimal SI suffixes
    ("5n", "5/1000000000", 1, 1),
    ("4u", "4/1000000", 1, 1),
    ("3m", "3/1000", 3, 1),
    ("100m", "1/10", 100, 1),
    ("8k", "8000", 8_000_000, 8000),
    ("50k", "50000", 50_000_000, 50_000),
    ("7M", "7000000", 7_000_000_000, 7_000_000),
    ("6G", "6000000000", 6_000_000_000_000, 6_000_000_000),
    ("5T", "5000000000000", 5 * 10**15, 5 * 10**12),
    ("40T", "40000000000000", 4 * 10**16, 4 * 10**13),
    ("300T", "300000000000000", 3 * 10**17, 3 * 10**14),
    ("2P", "2000000000000000", 2 * 10**18, 2 * 10**15),
    # binary SI suffixes
    ("1Ki", "1024", 1_024_000, 1024),
    ("8Ki", "8192", 8_192_000, 8192),
    ("7Mi", str(7 * 2**20), 7 * 2**20 * 1000, 7 * 2**20),
    ("6Gi", str(6 * GI), 6 * GI * 1000, 6 * GI),
    ("5Ti", str(5 * 2**40), 5 * 2**40 * 1000, 5 * 2**40),
    ("10Ti", str(10 * 2**40), 10 * 2**40 * 1000, 10 * 2**40),
    ("100Ti", str(100 * 2**40), 100 * 2**40 * 1000, 100 * 2**40),
    ("4Pi", str(4 * 2**50), 4 * 2**50 * 1000, 4 * 2**50),
    # exponents (`e`/`E` and a signed integer)
    ("1E-3", "1/1000", 1, 1),
    ("1e3", "1000", 1_000_000, 1000),
    ("1e+3", "1000", 1_000_000, 1000),
    ("1E+3", "1000", 1_000_000, 1000),
    ("12E6", "12000000", 12_000_000_000, 12_000_000),
    ("1E6", "1000000", 10**9, 10**6),
    ("1e9", "1000000000", 10**12, 10**9),
    ("1E12", "1000000000000", 10**15, 10**12),
    ("1e13", "10000000000000", 10**16, 10**13),
    ("1e14", "100000000000000", 10**17, 10**14),
    ("1e15", "1000000000000000", 10**18, 10**15),
    ("1.2e3", "1200", 1_200_000, 1200),
    ("1.3E+6", "1300000", 1_300_000_000, 1_300_000),
    ("1.40e9", "1400000000", 1_400_000_000_000, 1_400_000_000),
    ("1.53E12", "1530000000000", 1_530_000_000_000_000, 1_530_000_000_000),
    ("1.6e15", "1600000000000000", 1_600_000_000_000_000_000, 1_600_000_000_000_000),
    ("0.5e0", "1/2", 500, 1),
    ("0.5e-1", "1/20", 50, 1),
    ("0.5e-2", "1/200", 5, 1),
    # things that look like floating point
    ("0.5", "1/2", 500, 1),
    ("1.5", "3/2", 1500, 2),
    ("0.1", "1/10", 100, 1),
    ("0.001", "1/1000", 1, 1),
    ("0.005", "1/200", 5, 1),
    ("0.05", "1/20", 50, 1),
    ("0.0005k", "1/2", 500, 1),
    ("9.01", "901/100", 9010, 10),
    ("8.1k", "8100", 8_100_000, 8100),
    ("100.035k", "100035", 100_035_000, 100_035),
    ("10.035M", "10035000", 10_035_000_000, 10_035_000),
    ("7.123456M", "7123456", 7_123_456_000, 7_123_456),
    ("6.987654321G", "6987654321", 6_987_654_321_000, 6_987_654_321),
    ("5.444T", "5444000000000", 5_444 * 10**12, 5_444 * 10**9),
    ("40.1T", "40100000000000", 401 * 10**11 * 1000, 401 * 10**11),
    ("300.2T", "300200000000000", 3002 * 10**11 * 1000, 3002 * 10**11),
    ("2.5P", "2500000000000000", 25 * 10**14 * 1000, 25 * 10**14),
    # fractional binary amounts: exact, then rounded up to whole bytes by Value()
    ("1.5Gi", str(3 * 2**29), 3 * 2**29 * 1000, 3 * 2**29),
    ("+1.5Gi", str(3 * 2**29), 3 * 2**29 * 1000, 3 * 2**29),
    ("0.5Mi", "524288", 524_288_000, 524_288),
    ("100.035Ki", "2560896/25", 102_435_840, 102_436),
    ("0.05Gi", "268435456/5", 53_687_091_200, 53_687_092),
    ("0.025Ti", "137438953472/5", 27_487_790_694_400, 27_487_790_695),
    # sub-nano amounts round up (away from zero) to a whole nano-unit at parse time
    ("3.001n", "4/1000000000", 1, 1),
    ("1.1E-9", "2/1000000000", 1, 1),
    ("0.0000000001", "1/1000000000", 1, 1),
    ("0.0000000005", "1/1000000000", 1, 1),
    ("0.5e-9", "1/1000000000", 1, 1),
    ("0.9n", "1/1000000000", 1, 1),
    ("0.00000012345", "124/1000000000", 1, 1),
    ("0.00000012354", "124/1000000000", 1, 1),
    ("0.000000000001Ki", "2/1000000000", 1, 1),
    ("1e-100", "1/1000000000", 1, 1),
    # "things written by trolls" (upstream's words): numbers with a dot on either side only
    (".001", "1/1000", 1, 1),
    (".0001k", "1/10", 100, 1),
    (".5", "1/2", 500, 1),
    ("1.", "1", 1000, 1),
    ("1.G", "1000000000", 10**12, 10**9),
    # numbers without a single digit are zero wherever upstream's int64 fast path reads them
    (".", "0", 0, 0),
    ("+.", "0", 0, 0),
    ("-.", "0", 0, 0),
    ("+", "0", 0, 0),
    ("-", "0", 0, 0),
    ("m", "0", 0, 0),
    ("k", "0", 0, 0),
    ("E", "0", 0, 0),
    ("Ki", "0", 0, 0),
    ("Mi", "0", 0, 0),
    ("Gi", "0", 0, 0),
    ("Ti", "0", 0, 0),
    ("e3", "0", 0, 0),
    ("e-9", "0", 0, 0),
    (".e-9", "0", 0, 0),
    # the exponent is parsed as an int64, then truncated to int32
    ("1e4294967296", "1", 1000, 1),
    ("1e4294967295", "1/10", 100, 1),
    # binary amounts are capped at 2^63-1 (Value() gives the cap; the Go MilliValue() overflows)
    ("9Ei", str(INT64_MAX), None, INT64_MAX),
    ("8Ei", str(INT64_MAX), None, INT64_MAX),
    ("9223372036854775807Ki", str(INT64_MAX), None, INT64_MAX),
    # exa: a lone E is the decimal suffix, not an exponent (MilliValue() overflows in Go)
    ("1E", str(10**18), None, 10**18),
    ("1E18", str(10**18), None, 10**18),
    ("1.01E", str(101 * 10**16), None, 101 * 10**16),
]


@pytest.mark.parametrize(("text", "exact", "milli", "units"), VALID, ids=[c[0] for c in VALID])
def test_valid_quantities_parse_to_upstreams_exact_value_and_integer_units(text, exact, milli, units):
    assert parse_quantity(text) == Fraction(exact)
    assert to_nano(text) == Fraction(exact) * 10**9
    assert to_int("memory", text) == units
    assert to_int("nvidia.com/gpu", text) == units
    if milli is None:
        with pytest.raises(InvalidQuantity, match="out of range"):
            to_int("cpu", text)
    else:
        assert to_int("cpu", text) == milli


@pytest.mark.parametrize("text", [pytest.param(c[0], id=c[0]) for c in VALID if c[0][0] not in "+-"])
def test_an_explicit_plus_sign_changes_nothing_and_a_minus_sign_negates(text):
    assert parse_quantity("+" + text) == parse_quantity(text)
    assert parse_quantity("-" + text) == -parse_quantity(text)


# (input, the upstream error: "format" = ErrFormatWrong, "numeric" = ErrNumeric, "suffix" = ErrSuffix)
INVALID = [
    ("", "format"),
    # upstream's invalid list
    ("1.1.M", "format"),
    ("1+1.0M", "format"),
    ("0.1mi", "suffix"),
    ("0.1am", "format"),
    ("aoeu", "format"),
    (".5i", "suffix"),
    ("1i", "suffix"),
    ("-3.01i", "suffix"),
    ("-3.01e-", "suffix"),
    (" 1", "format"),  # whitespace is forbidden (Quantity.UnmarshalJSON trims it first: see below)
    ("1 ", "format"),
    # suffixes that do not exist
    ("1K", "suffix"),  # kilo is lower-case k only
    ("1Gb", "format"),
    ("1mi", "suffix"),
    ("1Ki3", "suffix"),
    ("1m3", "suffix"),
    ("1Mi-3", "suffix"),
    ("1-3", "suffix"),
    # exponents need digits, once
    ("1e", "suffix"),
    ("e", "suffix"),
    ("1ee3", "suffix"),
    ("1eE3", "suffix"),
    ("1e3e", "format"),
    ("1e+", "suffix"),
    ("1e9223372036854775808", "suffix"),  # does not fit strconv.ParseInt's int64
    # numbers
    ("1.2.3", "format"),
    ("--1", "suffix"),
    ("+-1", "suffix"),
    ("abc", "format"),
    ("1,5", "format"),
    ("½", "format"),
    ("１", "format"),  # only ASCII digits
    # no digit at all where upstream's inf.Dec slow path is taken: exponents below nano, and
    # Pi/Ei, for which the int64 fast path has no precision left
    ("Pi", "numeric"),
    ("Ei", "numeric"),
    ("+Pi", "numeric"),
    (".Ei", "numeric"),
    (".e-10", "numeric"),
    ("+e-10", "numeric"),
    ("e-10", "numeric"),
]

_ERRORS = {
    "format": "quantities must match the regular expression",
    "numeric": "unable to parse numeric part of quantity",
    "suffix": "unable to parse quantity's suffix",
}


@pytest.mark.parametrize(("text", "error"), INVALID, ids=[repr(c[0]) for c in INVALID])
def test_invalid_quantities_raise_upstreams_error(text, error):
    with pytest.raises(InvalidQuantity, match=_ERRORS[error]) as info:
        parse_quantity(text)
    assert repr(text) in str(info.value)
    assert "\n" not in str(info.value)
    if text and text == text.strip():  # to_int trims whitespace first, as UnmarshalJSON does
        with pytest.raises(InvalidQuantity):
            to_int("cpu", text)


@pytest.mark.parametrize(
    ("resource", "raw", "expected"),
    [
        pytest.param("cpu", "1n", 1, id="1n of cpu is 1 millicpu: any non-zero request gets something"),
        pytest.param("cpu", "0.1m", 1, id="0.1m of cpu rounds up to 1m"),
        pytest.param("cpu", "1500u", 2, id="1500u of cpu rounds up to 2m"),
        pytest.param("memory", "0.1", 1, id="0.1 byte rounds up to 1 byte"),
        pytest.param("memory", "1.5", 2, id="1.5 bytes round up to 2"),
        pytest.param("memory", "100m", 1, id="100m of memory is 1 byte"),
        pytest.param("memory", "1.1Ki", 1127, id="1.1Ki is 1126.4 bytes, rounded up"),
        pytest.param("ephemeral-storage", "1.5Gi", 3 * 2**29, id="ephemeral-storage in bytes"),
        pytest.param("pods", "110", 110, id="pods is a count"),
        pytest.param("hugepages-2Mi", "1Gi", GI, id="hugepages in bytes"),
        pytest.param("cpu", 2, 2000, id="a YAML integer is read as its text"),
        pytest.param("cpu", 0.5, 500, id="a YAML float is read as its text"),
        pytest.param("memory", 1e3, 1000, id="a float in exponent form"),
        pytest.param("memory", 1.5e-05, 1, id="a tiny float rounds up"),
        pytest.param("cpu", " 1 ", 1000, id="whitespace around a string is trimmed as UnmarshalJSON does"),
        pytest.param("cpu", "\t250m\n", 250, id="tabs and newlines are whitespace too"),
        pytest.param("cpu", "-1.5", -1500, id="a negative amount converts (the model rejects it)"),
        pytest.param("memory", "-1.5", -2, id="negative amounts round away from zero (upstream's int64 path)"),
    ],
)
def test_to_int_converts_to_the_schedulers_integer_unit(resource, raw, expected):
    assert to_int(resource, raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(True, id="a YAML boolean"),
        pytest.param(None, id="null"),
        pytest.param(float("inf"), id="infinity"),
        pytest.param(float("nan"), id="not a number"),
        pytest.param([], id="a list"),
        pytest.param("   ", id="only whitespace"),
    ],
)
def test_to_int_rejects_values_that_are_not_quantities(raw):
    with pytest.raises(InvalidQuantity):
        to_int("cpu", raw)


@pytest.mark.parametrize(
    ("resource", "text"),
    [
        pytest.param("cpu", "9223372036854775807", id="int64 max cores do not fit in millicores"),
        pytest.param("cpu", "1E", id="one exa-cpu in millicores overflows"),
        pytest.param("memory", "12E", id="12 exabytes overflow an int64"),
        pytest.param("memory", "1e30", id="1e30 bytes overflow an int64"),
        pytest.param("memory", "1e41", id="an absurd exponent is refused before any arithmetic"),
        pytest.param("memory", "1e2147483647", id="int32-max exponent"),
        pytest.param("memory", "1" * 1001, id="more than 1000 significant digits"),
    ],
)
def test_amounts_upstream_would_overflow_are_rejected_instead_of_wrapping(resource, text):
    # Deliberate difference: Go's MilliValue()/Value() overflow silently (0 or a negative number).
    with pytest.raises(InvalidQuantity, match=r"out of range|too many digits"):
        to_int(resource, text)


def test_huge_numbers_of_digits_that_are_zeros_are_still_exact():
    assert parse_quantity("0" * 5000 + "1") == 1
    assert parse_quantity("1." + "0" * 5000) == 1
    assert parse_quantity("0." + "0" * 5000 + "1") == Fraction(1, 10**9)


@pytest.mark.parametrize(
    ("milli", "text"),
    [(0, "0"), (1, "1m"), (250, "250m"), (1000, "1"), (1500, "1.5"), (2250, "2.25"), (16000, "16")],
)
def test_format_cpu_writes_what_operators_write(milli, text):
    assert format_cpu(milli) == text


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0"), (1000, "1000"), (1024, "1Ki"), (3 * 2**29, "1.5Gi"), (512 * 2**20, "512Mi"), (2**60, "1Ei")],
)
def test_format_bytes_uses_the_largest_binary_unit(n, text):
    assert format_bytes(n) == text
