"""A test-only evaluator for the few selector shapes the allocator's tests use, until the real CEL
layer (`kresched.sched.dra.cel`) is merged; rows with any other expression are skipped until then.

Shapes: `device.driver == "x"`, `device.allowMultipleAllocations == true|false`,
`device.attributes["domain"].id` (a bool) and `... == "string"`,
`device.capacity["domain"].id.compareTo(quantity("q")) >= 0` (also `["domain"]["id"]`), joined by `&&`.
A missing attribute or capacity is a runtime error (`no such key: <id>`), as in Kubernetes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kresched.model.dra import Device, quantity_value

_KEY = r'(?:\["(?P<{0}>[^"]+)"\]|\.(?P<{0}2>\w+))'
_DRIVER = re.compile(r'device\.driver == "(?P<v>[^"]*)"')
_MULTI = re.compile(r"device\.allowMultipleAllocations == (?P<v>true|false)")
_ATTR = re.compile(r'device\.attributes\["(?P<d>[^"]+)"\]' + _KEY.format("a") + r'(?: == "(?P<v>[^"]*)")?')
_CAP = re.compile(r'device\.capacity\["(?P<d>[^"]+)"\]' + _KEY.format("c")
                  + r'\.compareTo\(quantity\("(?P<q>[^"]+)"\)\) >= 0')


class InterimCelError(Exception):
    pass


View = tuple[str, Device]


def _lookup(table: dict[str, Any], driver: str, domain: str, ident: str) -> Any:
    for key in (f"{domain}/{ident}", ident if domain == driver else None):
        if key is not None and key in table:
            return table[key]
    raise InterimCelError(f"no such key: {ident}")


def _term(text: str) -> Callable[[View], bool] | None:
    if m := _DRIVER.fullmatch(text):
        return lambda v: v[0] == m["v"]
    if m := _MULTI.fullmatch(text):
        return lambda v: bool(v[1].allow_multiple_allocations) == (m["v"] == "true")
    if m := _ATTR.fullmatch(text):
        ident = m["a"] or m["a2"]

        def attribute(v: View) -> bool:
            a = _lookup(v[1].attributes, v[0], m["d"], ident)
            if m["v"] is not None:
                return a.string == m["v"]
            if a.bool_ is None:
                raise InterimCelError("no such overload")
            return a.bool_
        return attribute
    if m := _CAP.fullmatch(text):
        ident = m["c"] or m["c2"]
        return lambda v: (quantity_value(_lookup(v[1].capacity, v[0], m["d"], ident).value)
                          >= quantity_value(m["q"]))
    return None


class _Compiled:
    def __init__(self, terms: list[Callable[[View], bool]]) -> None:
        self.terms = terms

    def matches(self, view: View) -> bool:
        return all(t(view) for t in self.terms)


def supports(expression: str) -> bool:
    return all(_term(t.strip()) is not None for t in expression.split("&&"))


def compile_selector(expression: str) -> _Compiled:
    terms = [_term(t.strip()) for t in expression.split("&&")]
    if any(t is None for t in terms):
        raise NotImplementedError(f"the interim evaluator cannot read {expression!r}")
    return _Compiled([t for t in terms if t is not None])


def device_view(driver: str, device: Device) -> View:
    return driver, device
