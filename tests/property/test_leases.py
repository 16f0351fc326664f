"""Invariants of the lease verdict (seri.pure.leases)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.leases import Holder, Observation, verdict

holders = st.builds(
    Holder,
    pid=st.integers(1, 1 << 22),
    host=st.sampled_from(["a", "b"]),
    started=st.sampled_from(["", "boot:1", "boot:2"]),
)
observations = st.one_of(
    st.none(),
    st.builds(Observation, exists=st.booleans(), started=st.sampled_from(["", "boot:1", "boot:2"])),
)


@given(holders, st.one_of(st.none(), holders), observations)
def test_a_live_holder_is_never_taken_over(
    me: Holder, holder: Holder | None, seen: Observation | None
) -> None:
    decided = verdict(me, holder, seen)
    if holder is None:
        assert decided == "free"
        return
    if holder.same_process(me):
        assert decided == "mine"
        return
    if holder.host != me.host or seen is None:
        # Nothing seen of another host's processes: never assumed dead.
        assert decided == "held"
    elif not seen.exists:
        assert decided == "stale"
    elif holder.started and seen.started and seen.started != holder.started:
        assert decided == "stale"  # the pid now belongs to a later process
    else:
        assert decided == "held"


@given(holders)
def test_a_process_owns_its_own_lease(me: Holder) -> None:
    assert verdict(me, me, Observation(exists=True, started=me.started)) == "mine"
