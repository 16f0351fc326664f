"""A window learned from an overflow answer is kept with the session (review-1, N9).

config.json says 32k; the llama.cpp slot behind it has n_ctx 16,384 and a tokenizer twice as
dense as four characters a token. The first process learns both from one refused request
(llama.cpp states n_prompt_tokens and n_ctx). Before, only the scale was stored: every new
process sized its requests for 32k again until the next refusal. Now the next process starts
with the window it learned: a file is read a page sized for the 16k window (3,672 bytes at
scale 2), not for the 32k one (all of its 5,100).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env


def _turns(fake: FakeModel) -> list[dict[str, Any]]:
    return [body for body in fake.requests if "tools" in body]


def _results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_the_next_process_starts_with_the_window_an_overflow_stated(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(json.dumps({"context_window": 32_768}))
    for n in (1, 2, 3, 4):
        (project / f"big{n}.txt").write_text(f"file {n}\n" + "0123456789\n" * 1_400)
    # 300 lines: about 5,100 characters as read_file numbers them.
    (project / "mid.txt").write_text("abcdefghi\n" * 300)
    script: list[dict[str, Any]] = [
        *({"tool_calls": [call(f"r{n}", "read_file", path=f"big{n}.txt")]} for n in (1, 2, 3, 4)),
        {"text": "read them"},
        {"tool_calls": [call("r3", "read_file", path="mid.txt")]},
        {"text": "read mid"},
    ]
    slot = FakeModel(
        script,
        context_length=16_384,
        enforce_context=True,
        token_ratio=2,
        overflow_style="llamacpp",
        auto_recap=True,
    )
    with slot as fake:
        first = run_seri("chat", "-p", "read the big files", env=chat_env(fake))
        assert first.returncode == 0, first.stderr
        learned_with = len(_turns(fake))
        second = run_seri("chat", "--continue", "-p", "now mid.txt", env=chat_env(fake))
        assert second.returncode == 0, second.stderr
        requests = _turns(fake)
        status = run_seri("chat", "--continue", input="/status\n", env=chat_env(fake))
    # /status shows the window the requests are sized for.
    window_line = next(line for line in status.stderr.splitlines() if "window:" in line)
    assert "of 16k" in window_line or "16,384" in window_line, window_line
    assert first.stdout == "read them\n" and second.stdout == "read mid\n"
    # The first process paid one refused request (the fake refuses without using a step).
    assert learned_with == 6
    later = requests[learned_with:]
    assert len(later) == 2  # nothing refused
    mid = _results(later[1])[-1]
    # Sized for 16k: read_file shows the first lines and how to page on (for 32k all 300 fit).
    assert "   300\t" not in mid and "of 300" in mid, mid[-300:]
