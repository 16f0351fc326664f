"""The limits of one model call's wait (seri.pure.provider.answer_wait): what moves them, and what
never does."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.provider.answer_wait import (
    LOCAL_PROMPT_TOKENS_PER_SECOND,
    AnswerWait,
    PromptProgress,
    is_local_server,
    prompt_progress,
    prompt_seconds,
    speaks_llama_cpp,
)

seconds = st.floats(min_value=0.01, max_value=10_000, allow_nan=False)
progress = st.builds(
    PromptProgress,
    total=st.integers(0, 10**7),
    processed=st.integers(0, 10**7),
    cache=st.integers(0, 10**7),
)


@given(seconds, seconds, st.integers(0, 10**8), st.lists(st.tuples(progress, seconds)))
def test_the_deadline_never_shrinks_and_a_remote_one_never_moves(
    idle: float, total: float, body_bytes: int, arrivals: list[tuple[PromptProgress, float]]
) -> None:
    for local in (True, False):
        wait = AnswerWait(idle, total, 0.0, prompt=prompt_seconds(body_bytes) if local else 0.0)
        first = wait.deadline
        now = 0.0
        for item, step in arrivals:
            now += step
            before = wait.deadline
            wait.alive(now)
            wait.progressed(item, now)
            assert wait.deadline >= before
            assert wait.silence_limit() == idle
            assert not wait.silent_too_long(now)
        if not local:
            assert wait.deadline == first == total


@given(seconds, seconds, st.integers(0, 10**8))
def test_before_any_sign_of_life_a_local_server_has_its_prompt_time(
    idle: float, total: float, body_bytes: int
) -> None:
    allowance = prompt_seconds(body_bytes)
    wait = AnswerWait(idle, total, 0.0, prompt=allowance)
    assert wait.silence_limit() == wait.first_wait == idle + allowance
    assert not wait.silent_too_long(idle + allowance)
    assert wait.deadline == total + allowance


@given(st.integers(1, 10**6), st.integers(1, 10**6), st.floats(0.01, 100))
def test_progress_gives_the_rest_of_the_prompt_time_at_the_pace_seen(
    total: int, step: int, interval: float
) -> None:
    """Two progress chunks ``interval`` s apart, ``step`` tokens read between them: the rest
    of the prompt gets at least the time it takes at that pace."""
    wait = AnswerWait(1.0, 1.0, 0.0, prompt=0.001)
    first = PromptProgress(total=total + 2 * step, processed=0)
    second = PromptProgress(total=total + 2 * step, processed=step)
    wait.progressed(first, 0.0)
    assert wait.prompt >= first.remaining / LOCAL_PROMPT_TOKENS_PER_SECOND
    wait.progressed(second, interval)
    pace = step / interval
    assert wait.prompt >= interval + second.remaining / pace


def test_progress_chunks_read_as_llama_cpp_writes_them() -> None:
    # janhq/jan extensions/llamacpp-extension/src/index.ts quotes this chunk from llama.cpp.
    chunk = (
        '{"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}]'
        ',"created":1758113912,"id":"chatcmpl-UwZwgxQKyJMo7WzMzXlsi90YTUK2BJro","model":"qwen",'
        '"system_fingerprint":"b1-e4912fc","object":"chat.completion.chunk","prompt_progress":'
        '{"total":36,"cache":0,"processed":36,"time_ms":5706760300}}'
    )
    assert prompt_progress(chunk) == PromptProgress(total=36, processed=36, cache=0)
    assert prompt_progress('{"choices":[]}') is None
    assert not speaks_llama_cpp(chunk)
    assert speaks_llama_cpp('{"choices":[],"timings":{"cache_n":0,"prompt_n":367}}')


def _nested(children: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.lists(children, max_size=3) | st.dictionaries(
        st.text(max_size=5), children, max_size=3
    )


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), _nested))
def test_any_chunk_gives_progress_or_none(value: object) -> None:
    for text in (json.dumps(value), json.dumps({"prompt_progress": value}), "prompt_progress{"):
        found = prompt_progress(text)
        assert found is None or found.remaining >= 0


def test_local_servers_are_this_machine_and_private_networks() -> None:
    for url in (
        "http://127.0.0.1:8080/v1",
        "http://localhost:11434/v1",
        "http://[::1]:8000/v1",
        "http://192.168.1.20:8080/v1",
        "http://10.0.0.5/v1",
        "http://172.20.0.2:8000/v1",
        "http://gpu-box.local:8080/v1",
        "http://host.docker.internal:1234/v1",
        "http://0.0.0.0:8080/v1",
        "http://[fe90::1]:8080/v1",
    ):
        assert is_local_server(url), url
    for url in (
        "https://openrouter.ai/api/v1",
        "https://api.openai.com/v1",
        "http://172.32.0.1/v1",
        "http://8.8.8.8/v1",
        "not a url",
    ):
        assert not is_local_server(url), url
