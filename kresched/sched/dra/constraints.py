"""A claim's device constraints, as the v1.36 allocator checks them while it searches
(`matchAttributeConstraint` in `allocator_incubating.go`, `distinctAttributeConstraint` in
`constraint.go`).

Owns: `matchAttribute` (the first device fixes the value; later devices need an equal value of the
same kind; versions compare as exact strings) and `distinctAttribute` (no two devices share a
value), each applying to the listed requests (a parent request name covers its subrequests) or to
all when none are listed; a device without the attribute fails both. The attribute is looked up by
its fully qualified name, or by its bare ID when the domain is the device's driver.

Upstream's quirk, replicated: `distinctAttribute` keeps the values it has seen in a map keyed by
*request name*, so a second device of the same request overwrites the first one's entry (and
removing either deletes it); a request of count 2 can therefore end with two devices of equal value
if a third device comes between. Constraints are monotonic: the search calls `add` for each device
it tries and `remove` exactly once for each successful `add` it undoes. Must not do I/O.
"""

from __future__ import annotations

from kresched.model.dra import Device, DeviceAttribute

__all__ = ["DistinctAttribute", "MatchAttribute", "lookup_attribute"]


def lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """`lookupAttribute`: the fully qualified name, else the bare ID when the domain is the driver."""
    attribute = device.attributes.get(name)
    if attribute is not None:
        return attribute
    domain, slash, ident = name.partition("/")
    if not slash or domain != driver:
        return None
    return device.attributes.get(ident)


def _kind_value(attribute: DeviceAttribute) -> tuple[str, object] | None:
    """The scalar's kind and value in upstream's switch order; None for a list or unset value."""
    if attribute.string is not None:
        return "string", attribute.string
    if attribute.int_ is not None:
        return "int", attribute.int_
    if attribute.bool_ is not None:
        return "bool", attribute.bool_
    if attribute.version is not None:
        return "version", attribute.version
    return None


class _Constraint:
    __slots__ = ("attribute_name", "num_devices", "request_names")

    def __init__(self, attribute_name: str, request_names: tuple[str, ...]) -> None:
        self.attribute_name = attribute_name
        self.request_names = frozenset(request_names)
        self.num_devices = 0

    def applies(self, request: str, sub_request: str) -> bool:
        names = self.request_names
        if not names:
            return True
        return request in names or (bool(sub_request) and f"{request}/{sub_request}" in names)


class MatchAttribute(_Constraint):
    __slots__ = ("value",)

    def __init__(self, attribute_name: str, request_names: tuple[str, ...]) -> None:
        super().__init__(attribute_name, request_names)
        self.value: tuple[str, object] | None = None

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attribute = lookup_attribute(device, driver, self.attribute_name)
        if attribute is None:
            return False
        value = _kind_value(attribute)
        if self.num_devices == 0:
            self.value = value
            self.num_devices = 1
            return True
        if value is None or value != self.value:
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str, device: Device, driver: str) -> None:
        if self.applies(request, sub_request):
            self.num_devices -= 1


class DistinctAttribute(_Constraint):
    __slots__ = ("seen",)

    def __init__(self, attribute_name: str, request_names: tuple[str, ...]) -> None:
        super().__init__(attribute_name, request_names)
        #: Keyed by request name, as upstream keys it (see the module docstring).
        self.seen: dict[str, tuple[str, object] | None] = {}

    def add(self, request: str, sub_request: str, device: Device, driver: str) -> bool:
        if not self.applies(request, sub_request):
            return True
        attribute = lookup_attribute(device, driver, self.attribute_name)
        if attribute is None:
            return False
        value = _kind_value(attribute)
        if self.num_devices > 0:
            # An unknown kind never satisfies; a value equal to any seen one of the same kind fails.
            if value is None and self.seen:
                return False
            if any(value == other for other in self.seen.values()):
                return False
        self.seen[request] = value
        self.num_devices += 1
        return True

    def remove(self, request: str, sub_request: str, device: Device, driver: str) -> None:
        if self.applies(request, sub_request):
            self.seen.pop(request, None)
            self.num_devices -= 1
