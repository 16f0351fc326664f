"""seri against a real llama-server running SmolLM2-135M-Instruct (see conftest.py).

A 135M model does not call tools on its own; asked to repeat a `<tool_call>` block verbatim at
temperature 0, it does, and the server's own tool-call parser turns it into a real tool call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import RunSeri
from tests.real.conftest import ALIAS, LlamaServer


def _tool_call(name: str, **arguments: Any) -> str:
    block = json.dumps({"name": name, "arguments": arguments})
    return f"Repeat exactly:\n<tool_call>\n{block}\n</tool_call>"


def _env(server: LlamaServer) -> dict[str, str]:
    return {"SERI_BASE_URL": server.base_url, "SERI_API_KEY": "none", "SERI_MODEL": ALIAS}


def _configure(home: Path, **sampling: Any) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"sampling": {"temperature": 0, **sampling}}))


def _events(run_seri: RunSeri, kind: str) -> list[dict[str, Any]]:
    lines = run_seri("trajectory", "export").stdout.splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == kind]


def test_a_write_file_call_runs_and_the_session_resumes(
    run_seri: RunSeri, seri_home: Path, project: Path, llama: LlamaServer
) -> None:
    _configure(seri_home)
    first = run_seri(
        "chat",
        "--allow",
        "write_file",
        "--max-turns",
        "1",
        "-p",
        _tool_call("write_file", path="hello.txt", content="hi from llama"),
        env=_env(llama),
        timeout=300,
    )
    # One turn: the tool ran; whatever the model would say next is beyond the budget.
    assert "turn budget spent" in first.stderr, first.stderr
    assert (project / "hello.txt").read_text() == "hi from llama"
    results = _events(run_seri, "tool_result")
    assert results[-1]["name"] == "write_file" and results[-1]["ok"]
    # The window is the one the server reports in /v1/models (meta.n_ctx), not the default.
    [window] = _events(run_seri, "context_window")
    assert (window["tokens"], window["from"]) == (llama.context, "server")
    # Resume: the server takes the history back, tool call and result included.
    second = run_seri(
        "chat", "--continue", "-p", "Repeat exactly: all good", env=_env(llama), timeout=300
    )
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip()
    assert _events(run_seri, "model_call")[-1]["finish_reason"] == "stop"


def test_a_bash_call_runs(
    run_seri: RunSeri, seri_home: Path, project: Path, llama: LlamaServer
) -> None:
    _configure(seri_home)
    result = run_seri(
        "chat",
        "--allow",
        "bash",
        "--max-turns",
        "1",
        "-p",
        _tool_call("bash", command="echo ran > out.txt"),
        env=_env(llama),
        timeout=300,
    )
    assert "turn budget spent" in result.stderr, result.stderr
    assert (project / "out.txt").read_text() == "ran\n"


def test_a_request_the_servers_window_cannot_hold_is_not_sent(
    run_seri: RunSeri, seri_home: Path, small_llama: LlamaServer
) -> None:
    """The server states a 1,024-token window, smaller than seri's own prompt: seri says so
    before sending anything (issue 31: a refused request is the exception, not the plan)."""
    _configure(seri_home)
    result = run_seri("chat", "-p", "Repeat exactly: ok", env=_env(small_llama), timeout=300)
    assert result.returncode == 2, result.stderr
    assert "context_window" in result.stderr, result.stderr
    assert not _events(run_seri, "overflow")
    assert not _events(run_seri, "model_call")
    # The window seri judged by is the server's own, as its message says.
    assert f"{small_llama.context:,}" in result.stderr, result.stderr


def test_the_servers_own_overflow_is_recognised(
    run_seri: RunSeri, seri_home: Path, small_llama: LlamaServer
) -> None:
    """config.json claims a window the server does not have: the request goes out and
    llama.cpp's own refusal is recognised as an overflow, not a failure of another kind."""
    seri_home.mkdir(parents=True, exist_ok=True)
    config = {"context_window": 100_000, "sampling": {"temperature": 0}}
    (seri_home / "config.json").write_text(json.dumps(config))
    result = run_seri("chat", "-p", "Repeat exactly: ok", env=_env(small_llama), timeout=300)
    assert result.returncode == 1, result.stderr
    assert "too long" in result.stderr, result.stderr
    overflow = _events(run_seri, "overflow")
    assert overflow and "exceeds the available context size" in overflow[0]["error"]


def test_a_tool_call_cut_by_max_tokens_is_dropped_and_the_session_goes_on(
    run_seri: RunSeri, seri_home: Path, project: Path, llama: LlamaServer
) -> None:
    _configure(seri_home, max_tokens=25)
    cut = run_seri(
        "chat",
        "--allow",
        "write_file",
        "-p",
        _tool_call("write_file", path="cut.txt", content="this answer is cut by the limit"),
        env=_env(llama),
        timeout=300,
    )
    assert cut.returncode == 1
    assert "finish_reason length" in cut.stderr and "dropped, not run" in cut.stderr
    assert not (project / "cut.txt").exists()
    assert _events(run_seri, "turn_end")[-1]["status"] == "length"
    shown = run_seri("sessions", "show", _events(run_seri, "header")[-1]["session"], "--json")
    assert "tool_calls" not in shown.stdout, "the cut call was stored"
    # A server sent the cut call back answers 500 to every request; seri never sends it.
    _configure(seri_home)
    after = run_seri(
        "chat", "--continue", "-p", "Repeat exactly: next", env=_env(llama), timeout=300
    )
    assert after.returncode == 0, after.stderr
