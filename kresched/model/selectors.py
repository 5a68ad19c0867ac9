"""Label and node selectors, matched exactly as apimachinery's `labels.Selector` and
component-helpers' `nodeaffinity` do. Pure functions; no I/O."""

from __future__ import annotations

from kresched.model.objects import LabelSelector, NodeSelectorRequirement, NodeSelectorTerm

__all__ = ["label_selector_matches", "node_selector_term_matches", "node_requirement_matches"]


def label_selector_matches(selector: LabelSelector | None, labels: dict[str, str]) -> bool:
    """`metav1.LabelSelectorAsSelector`: a nil selector matches nothing, an empty one everything."""
    if selector is None:
        return False
    for k, v in selector.match_labels.items():
        if labels.get(k) != v:
            return False
    for req in selector.match_expressions:
        op = req.operator
        present = req.key in labels
        if op == "In":
            if not present or labels[req.key] not in req.values:
                return False
        elif op == "NotIn":
            if present and labels[req.key] in req.values:
                return False
        elif op == "Exists":
            if not present:
                return False
        elif op == "DoesNotExist":
            if present:
                return False
        else:
            return False  # invalid operator: the API would have rejected it; match nothing
    return True


def node_requirement_matches(req: NodeSelectorRequirement, value: str | None) -> bool:
    """One node selector requirement against the label (or field) value, None when absent."""
    op = req.operator
    if op == "In":
        return value is not None and value in req.values
    if op == "NotIn":
        return value is None or value not in req.values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in ("Gt", "Lt"):
        if value is None or len(req.values) != 1:
            return False
        try:
            have, want = int(value), int(req.values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def node_selector_term_matches(term: NodeSelectorTerm, node_name: str, labels: dict[str, str]) -> bool:
    """Expressions and fields are ANDed; an empty term matches no node (nodeaffinity helpers)."""
    if not term.match_expressions and not term.match_fields:
        return False
    for req in term.match_expressions:
        if not node_requirement_matches(req, labels.get(req.key)):
            return False
    for req in term.match_fields:
        # Only metadata.name is a supported field; anything else fails validation upstream.
        if req.key != "metadata.name" or req.operator not in ("In", "NotIn"):
            return False
        if not node_requirement_matches(req, node_name):
            return False
    return True
