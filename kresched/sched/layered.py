"""A mapping derived from another by a few changes, without copying it: `Layered`.

A simulation derives one cluster from another a pod at a time, and some of what it keeps per
cluster is as large as the cluster (the claims that hold devices: six a node, 30,000 on a
5,000-node cluster). A dict copied for every pod placed costs the size of the cluster twice (the
copy, then freeing it); a `Layered` costs the size of its changes: it shares its base and holds
only what changed since (`changed`), and once that grows past about twice the square root of the
base it is folded into a new base (a copy every so many changes: amortized, the square root of the
size per change). Reads are two lookups at most.

Iterating gives the keys in the order a dict changed the same way would (a key set again after it
was taken away comes last), folding base and changes into one dict first. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from math import isqrt
from typing import Any, TypeVar

__all__ = ["Draft", "Layered"]

K = TypeVar("K")
V = TypeVar("V")

#: A key taken away in the top layer.
_GONE: Any = object()
_NONE: frozenset[Any] = frozenset()
#: `dict.get`'s answer for a key the top layer does not hold.
_MISS: Any = object()


class Layered(Mapping[K, V]):
    """An immutable mapping: a shared `base` dict and the changes since (see the module docstring)."""

    __slots__ = ("_base", "_len", "_moved", "_top")

    def __init__(self, base: Mapping[K, V] | None = None) -> None:
        self._base: dict[K, V] = dict(base) if base is not None else {}
        #: Key → its new value, or `_GONE`.
        self._top: dict[K, Any] = {}
        #: Keys of the base taken away and set again (a dict moves them last).
        self._moved: frozenset[K] = _NONE
        self._len = len(self._base)

    def __getitem__(self, key: K) -> V:
        v = self._top.get(key, _MISS)
        if v is _MISS:
            return self._base[key]
        if v is _GONE:
            raise KeyError(key)
        return v

    def get(self, key: K, default: Any = None) -> Any:
        v = self._top.get(key, _MISS)
        if v is _MISS:
            return self._base.get(key, default)
        return default if v is _GONE else v

    def __contains__(self, key: object) -> bool:
        v = self._top.get(key, _MISS)  # type: ignore[call-overload]
        if v is _MISS:
            return key in self._base
        return v is not _GONE

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[K]:
        top = self._top
        if not top:
            return iter(self._base)
        return iter(self._folded())

    def keys(self) -> Any:
        return (self._folded() if self._top else self._base).keys()

    def values(self) -> Any:
        return (self._folded() if self._top else self._base).values()

    def items(self) -> Any:
        return (self._folded() if self._top else self._base).items()

    def changed(self, set_to: Mapping[K, V] | Iterable[tuple[K, V]] = (), gone: Iterable[K] = ()) -> Layered[K, V]:
        """This mapping with the keys of `set_to` set (in its order) and then those of `gone` taken
        away (absent ones ignored); self when nothing changes."""
        d = self.draft()
        touched = False
        for k, v in set_to.items() if isinstance(set_to, Mapping) else set_to:
            d[k] = v
            touched = True
        for k in gone:
            if k in d:
                del d[k]
                touched = True
        return d.done() if touched else self

    def draft(self) -> Draft[K, V]:
        """A copy to change as a dict is changed (`d[k] = v`, `del d[k]`, `pop`), then made a
        `Layered` again (`done`): it holds only what changed, as this one does."""
        d: Draft[K, V] = Draft.__new__(Draft)
        d._base, d._top, d._moved, d._len = self._base, self._top.copy(), self._moved, self._len
        return d

    def _folded(self) -> dict[K, V]:
        """Base and changes as one dict."""
        out = self._base.copy()
        moved = self._moved
        for k, v in self._top.items():
            if v is _GONE:
                out.pop(k, None)
            else:
                if moved and k in moved:
                    out.pop(k, None)
                out[k] = v
        return out

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Layered):
            other = other._folded() if other._top else other._base
        if not isinstance(other, Mapping):
            return NotImplemented
        return (self._folded() if self._top else self._base) == dict(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Layered({self._folded()!r})"


class Draft(Layered[K, V]):
    """A `Layered` being changed (`Layered.draft`): set and take away keys, then `done`."""

    __slots__ = ()

    def __setitem__(self, key: K, value: V) -> None:
        top = self._top
        was = top.get(key, _MISS)
        if was is _GONE:  # a key of the base taken away, back: last, as in a dict
            del top[key]
            self._moved = self._moved | {key}
            self._len += 1
        elif was is _MISS and key not in self._base:
            self._len += 1
        top[key] = value

    def __delitem__(self, key: K) -> None:
        if key not in self:
            raise KeyError(key)
        self._len -= 1
        if key in self._base:
            self._top[key] = _GONE
        else:
            del self._top[key]

    def pop(self, key: K, default: Any = _MISS) -> Any:
        if key in self:
            value = self[key]
            del self[key]
            return value
        if default is _MISS:
            raise KeyError(key)
        return default

    def done(self) -> Layered[K, V]:
        """The changed mapping (folded into a new base once its changes pass about twice the square
        root of its base: each draft copies the changes, each fold the base; a placement changes
        several devices' entries at once). The draft is not to be changed after."""
        out: Layered[K, V] = Layered.__new__(Layered)
        out._base, out._top, out._moved, out._len = self._base, self._top, self._moved, self._len
        if len(out._top) > 32 + 2 * isqrt(len(out._base)):
            out._base, out._top, out._moved = out._folded(), {}, _NONE
        return out
