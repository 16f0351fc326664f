"""The usage sums kept by trigger (schema migration 5) over any recorded body: the insert of
an event never fails (it shares its transaction with the conversation's write), and the
sums are those of the numbers that were reported."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.io.session.session_table import create_session
from seri.io.session.store import open_store

# Values that are not numbers (text that SQLite would not read as one).
odd = st.one_of(
    st.none(),
    st.text(alphabet="abc", max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(alphabet="xyz", max_size=3), st.integers(), max_size=2),
)
usage = st.one_of(
    odd,
    st.fixed_dictionaries(
        {},
        optional={
            "input_tokens": st.one_of(st.integers(0, 10**6), odd),
            "output_tokens": st.one_of(st.integers(0, 10**6), odd),
            "cached_tokens": st.one_of(st.integers(0, 10**6), odd),
            "cost": st.one_of(st.floats(0, 10), st.integers(0, 3), st.booleans(), odd),
            "reported": st.booleans(),
        },
    ),
)
bodies = st.one_of(
    st.builds(lambda u: json.dumps({"usage": u}), usage),
    st.just("not json"),
    st.just("[]"),
    st.just("{}"),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["model_call", "summary_call", "tool_call"]), bodies), max_size=12
    )
)
def test_recording_any_usage_never_fails_and_sums_the_numbers(
    events: list[tuple[str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp))
        create_session(
            store,
            session_id="s",
            project="/p",
            now=1.0,
            model="m",
            system_prompt="",
            prompt_hashes={},
        )
        with store.write() as conn:
            conn.execute(
                "INSERT INTO runs(id, session_id, started, header) VALUES ('r','s',1,'{}')"
            )
            for kind, body in events:
                conn.execute(
                    "INSERT INTO events(run_id, session_id, at, type, body) VALUES ('r','s',1,?,?)",
                    (kind, body),
                )
        rows = store.connection.execute(
            "SELECT calls, input_tokens, costed_calls FROM session_usage WHERE session_id='s'"
        ).fetchall()
        store.close()
    calls = [
        json.loads(body) for kind, body in events if kind != "tool_call" and body != "not json"
    ]
    if not calls:
        assert rows == []
        return
    [(got_calls, got_input, got_costed)] = rows
    assert got_calls == len(calls)
    usages = [c.get("usage") if isinstance(c, dict) else None for c in calls]
    assert got_input == sum(
        u["input_tokens"]
        for u in usages
        if isinstance(u, dict) and isinstance(u.get("input_tokens"), int)
    )
    assert got_costed == sum(
        1 for u in usages if isinstance(u, dict) and type(u.get("cost")) in (int, float)
    )
