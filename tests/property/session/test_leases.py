"""Invariants of the lease verdict (seri.pure.session.leases)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.session.leases import PID_MAX_LIMIT, Holder, PidObservation, possible_pid, verdict

holders = st.builds(
    Holder,
    pid=st.integers(1, 1 << 22),
    host=st.sampled_from(["a", "b"]),
    started=st.sampled_from(["", "boot:1", "boot:2"]),
)
observations = st.one_of(
    st.none(),
    st.builds(
        PidObservation,
        exists=st.booleans(),
        started=st.sampled_from(["", "boot:1", "boot:2"]),
        zombie=st.booleans(),
    ),
)


@given(holders, st.one_of(st.none(), holders), observations)
def test_a_live_holder_is_never_taken_over(
    me: Holder, holder: Holder | None, seen: PidObservation | None
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
    elif not seen.exists or seen.zombie:
        assert decided == "stale"  # gone, or killed and waiting only to be reaped
    elif holder.started and seen.started and seen.started != holder.started:
        assert decided == "stale"  # the pid now belongs to a later process
    else:
        assert decided == "held"


@given(holders)
def test_a_process_owns_its_own_lease(me: Holder) -> None:
    assert verdict(me, me, PidObservation(exists=True, started=me.started)) == "mine"


impossible_pids = st.one_of(st.integers(max_value=0), st.integers(min_value=PID_MAX_LIMIT + 1))


@given(holders, impossible_pids, st.sampled_from(["a", "b"]), observations)
def test_an_impossible_pid_never_holds_a_session(
    me: Holder, pid: int, host: str, seen: PidObservation | None
) -> None:
    """pid -1, 0 or one past the kernel's limit: no process holds it (``kill(-1, 0)``
    succeeds, so an observation may even say it exists), on this host or any other."""
    holder = Holder(pid=pid, host=host, started=me.started)
    assert not possible_pid(pid)
    assert verdict(me, holder, seen) == "stale"


@given(holders, holders)
def test_a_zombie_holder_is_dead(me: Holder, holder: Holder) -> None:
    holder = Holder(pid=holder.pid, host=me.host, started=holder.started)
    if holder.same_process(me):
        return
    zombie = PidObservation(exists=True, started=holder.started, zombie=True)
    assert verdict(me, holder, zombie) == "stale"
