"""Label and node selectors, matched exactly as apimachinery's `labels.Selector` and
component-helpers' `nodeaffinity` do. Pure functions; no I/O."""

from __future__ import annotations

import re
from functools import lru_cache

from kresched.model.specs import LabelSelector, NodeSelectorRequirement, NodeSelectorTerm

__all__ = [
    "label_selector_matches",
    "label_selector_text",
    "node_field_requirement_matches",
    "node_requirement_matches",
    "node_selector_term_matches",
]


def label_selector_matches(selector: LabelSelector | None, labels: dict[str, str]) -> bool:
    """`metav1.LabelSelectorAsSelector` then `Matches`: a nil selector matches nothing, an empty one
    everything. A selector upstream fails to parse (an unknown operator, In/NotIn without values,
    Exists/DoesNotExist with values, a value that is not a valid label value) matches nothing,
    as its callers (the eviction API, the disruption controller) treat the error."""
    if selector is None:
        return False
    for k, v in selector.match_labels.items():
        if labels.get(k) != v:
            return False
    for req in selector.match_expressions:
        op = req.operator
        values = req.values
        value = labels.get(req.key)
        if op == "In":
            if not values or value is None or value not in values:
                return False
        elif op == "NotIn":
            if not values or (value is not None and value in values):
                return False
        elif op == "Exists":
            if values or value is None:
                return False
        elif op == "DoesNotExist":
            if values or value is not None:
                return False
        else:
            return False
        if values and not _valid_label_values(tuple(values)):
            return False
    return True


def label_selector_text(selector: LabelSelector) -> str:
    """`metav1.LabelSelectorAsSelector(selector).String()`: what `?labelSelector=` takes. Requirements
    sorted by key; `k=v` for matchLabels, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`."""
    reqs: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in selector.match_labels.items()]
    for r in selector.match_expressions:
        values = ",".join(sorted(set(r.values)))
        text = {"In": f"{r.key} in ({values})", "NotIn": f"{r.key} notin ({values})", "Exists": r.key,
                "DoesNotExist": f"!{r.key}"}.get(r.operator)
        if text is not None:
            reqs.append((r.key, text))
    return ",".join(text for _, text in sorted(reqs))


def node_requirement_matches(req: NodeSelectorRequirement, value: str | None) -> bool:
    """One `matchExpressions` requirement against a node's label value (None when absent).

    As `labels.NewRequirement` + `Requirement.Matches`: a requirement upstream fails to parse
    (In/NotIn without values, Exists/DoesNotExist with values, Gt/Lt without exactly one
    integer, any value that is not a valid label value) makes its term match no node. Gt/Lt
    compare as `strconv.ParseInt(s, 10, 64)` does: ASCII digits with an optional sign, in int64.
    """
    op = req.operator
    values = req.values
    if not _valid_label_values(tuple(values)):
        return False
    if op == "In":
        return value is not None and value in values
    if op == "NotIn":
        return bool(values) and (value is None or value not in values)
    if op == "Exists":
        return not values and value is not None
    if op == "DoesNotExist":
        return not values and value is None
    if op in ("Gt", "Lt"):
        if value is None or len(values) != 1:
            return False
        want = _parse_int64(values[0])
        have = _parse_int64(value)
        if want is None or have is None:
            return False
        return have > want if op == "Gt" else have < want
    return False


def node_field_requirement_matches(req: NodeSelectorRequirement, node_name: str) -> bool:
    """One `matchFields` requirement (`nodeSelectorRequirementsAsFieldSelector`): In/NotIn with
    exactly one value; the only node field is `metadata.name`, any other reads as empty."""
    if len(req.values) != 1:
        return False
    have = node_name if req.key == "metadata.name" else ""
    if req.operator == "In":
        return have == req.values[0]
    if req.operator == "NotIn":
        return have != req.values[0]
    return False


def node_selector_term_matches(term: NodeSelectorTerm, node_name: str, labels: dict[str, str]) -> bool:
    """Expressions and fields are ANDed; an empty term matches no node (nodeaffinity helpers)."""
    if not term.match_expressions and not term.match_fields:
        return False
    for req in term.match_expressions:
        if not node_requirement_matches(req, labels.get(req.key)):
            return False
    return all(node_field_requirement_matches(req, node_name) for req in term.match_fields)


_LABEL_VALUE = re.compile(r"(?:(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_INT = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@lru_cache(maxsize=4096)
def _valid_label_values(values: tuple[str, ...]) -> bool:
    """`validation.IsValidLabelValue` for every value (at most 63 characters, alphanumeric ends)."""
    return all(len(v) <= 63 and _LABEL_VALUE.fullmatch(v) is not None for v in values)


def _parse_int64(text: str) -> int | None:
    """`strconv.ParseInt(text, 10, 64)`, or None where Go returns an error."""
    if _INT.fullmatch(text) is None:
        return None
    n = int(text)
    return n if _INT64_MIN <= n <= _INT64_MAX else None
