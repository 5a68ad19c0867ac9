"""`Layered` is a dict changed the same way: contents, order, length and lookups, whatever the changes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kresched.sched.layered import Layered

KEYS = st.integers(0, 40)
#: One `changed` call: keys set (in order), then keys taken away.
CHANGES = st.tuples(st.lists(st.tuples(KEYS, st.integers())), st.lists(KEYS))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(KEYS, st.integers()), st.lists(CHANGES, max_size=60))
def test_a_layered_mapping_is_the_dict_changed_the_same_way(base, steps):
    expected = dict(base)
    layered = Layered(base)
    history = [(layered, dict(expected))]
    for sets, gone in steps:
        for k, v in sets:
            expected[k] = v
        for k in gone:
            expected.pop(k, None)
        layered = layered.changed(sets, gone)
        history.append((layered, dict(expected)))
    for got, want in history:  # every version stays what it was
        assert list(got.items()) == list(want.items())
        assert list(got) == list(want)
        assert len(got) == len(want)
        assert got == want
        assert want == got
        for k in range(41):
            assert (k in got) == (k in want)
            assert got.get(k, "absent") == want.get(k, "absent")


def test_a_key_taken_away_and_set_again_comes_last_as_in_a_dict():
    layered = Layered({"a": 1, "b": 2, "c": 3}).changed(gone=["a"]).changed({"a": 4})
    assert list(layered.items()) == [("b", 2), ("c", 3), ("a", 4)]
    assert layered["a"] == 4


def test_no_change_is_the_same_mapping():
    layered = Layered({"a": 1})
    assert layered.changed() is layered
    assert layered.changed(gone=["absent"]) is layered


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, st.integers()),
       st.lists(st.tuples(st.sampled_from(("set", "del", "pop")), KEYS, st.integers()), max_size=80))
def test_a_draft_changes_as_a_dict_does_and_leaves_its_origin_as_it_was(base, ops):
    origin = Layered(base).changed(gone=[k for k in base if k % 3 == 0])
    expected, before = dict(origin.items()), list(origin.items())
    draft = origin.draft()
    for op, k, v in ops:
        if op == "set":
            draft[k] = v
            expected[k] = v
        elif op == "pop":
            assert draft.pop(k, "absent") == expected.pop(k, "absent")
        elif k in expected:
            del draft[k]
            del expected[k]
    done = draft.done()
    assert list(done.items()) == list(expected.items())
    assert len(done) == len(expected)
    assert list(origin.items()) == before
