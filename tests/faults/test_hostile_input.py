"""Hostile input, H1–H2 (issue 13): nothing a person, a config file, a provider or a model
sends ends a run in "internal error".

H1 is the catalogue the attack suite found, each case by name: one clear line on stderr,
the right exit status, and a scripted session that goes on to its next line. H2 fuzzes every
input surface (argv, environment, config.json, stdin lines, stream bytes, tool arguments,
files read) with hypothesis; each example runs the real command line in a fresh process
forked from ``fuzz_child.py``, its profile in memory (/dev/shm) where there is one.
``FUZZ_EXAMPLES`` sets the examples per surface: 8 in ``make test`` (the same 8 every run:
the fuzzers are derandomized), 300 in ``make fuzz``, the long hunt over every surface.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scripts.fake_model import FakeModel
from tests.faults.ledger import FaultLedger
from tests.faults.support import (
    HERE,
    KEY,
    call,
    chat_env,
    database,
    file_size_limit,
    one_line_error,
    run,
    seri,
    session_ids,
    write_config,
)
from tests.fuzzing import FUZZ

HUGE = "9" * 5000
# Big bodies go out in big pieces: these tests are about their content, not the streaming.
FAST = {"piece_chars": 1 << 20, "split_bytes": 1 << 20}
DEEP = "[" * 100_000 + "]" * 100_000


def _raw_call(id_: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": id_, "name": name, "arguments": arguments}


def _tool_results(fake: FakeModel) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"]
        for m in fake.requests[-1]["messages"]
        if m["role"] == "tool"
    }


def _sse(*chunks: dict[str, Any] | str) -> str:
    lines = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    return "".join(lines) + "data: [DONE]\n\n"


def _delta(text: str, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "id": "g",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}],
        **extra,
    }


# --- H1 --------------------------------------------------------------------------------------


def test_H1_tool_arguments_that_break_parsers(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """Integers of thousands of digits, NaN, lone surrogates, an invalid glob and JSON nested
    100,000 deep as tool arguments: each call gets an error result the model can act on, and
    the task goes on to its answer."""
    (project / "x.txt").write_text("hello\n")
    calls = [
        _raw_call("huge", "read_file", '{"path": "x.txt", "offset": ' + HUGE + "}"),
        _raw_call("nan", "bash", '{"command": "echo hi", "timeout": NaN}'),
        _raw_call("inf", "read_file", '{"path": "x.txt", "limit": 1e999}'),
        _raw_call("lone", "write_file", '{"path": "a\\ud800.txt", "content": "b\\udc00"}'),
        _raw_call("glob", "glob", '{"pattern": "[9-0]"}'),
        _raw_call("grep", "grep", '{"pattern": "[9-0]"}'),
        _raw_call("deep", "read_file", DEEP),
    ]
    fault_ledger.injected("H1", len(calls))
    with FakeModel([{"tool_calls": calls, **FAST}, {"text": "carried on"}]) as fake:
        result = run(
            seri("chat", "--allow", "write_file", "-p", "go"),
            home=seri_home,
            cwd=project,
            env=chat_env(fake),
        )
        results = _tool_results(fake)
    assert result.returncode == 0, result.stderr
    one_line_error(result.stderr)
    assert result.stdout == "carried on\n"
    assert "thousands of digits" in results["huge"]
    assert "finite number" in results["nan"]
    assert "lone surrogate" in results["lone"]
    assert "invalid glob pattern '[9-0]'" in results["glob"]
    assert "invalid regular expression" in results["grep"]
    assert "nested too deeply" in results["deep"]
    assert not list(project.glob("a*.txt"))
    fault_ledger.survived("H1", len(calls))


def _refused_in_one_line(
    result: subprocess.CompletedProcess[str], expected: str, case: object
) -> None:
    """Bad input, as the house rule has it: exit 2 and one line on stderr that says
    ``expected`` (``case`` names the input in a failure)."""
    assert result.returncode == 2, (case, result.stderr)
    one_line_error(result.stderr)
    assert expected in result.stderr and len(result.stderr.splitlines()) == 1, (case, result.stderr)


def test_H1_config_values_that_break_parsers(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """config.json with a 5000-digit integer, NaN, JSON nested 100,000 deep, an invalid glob
    in a permission rule: exit 2 with one line naming the file and the value."""
    cases = {
        '{"max_turns": ' + HUGE + "}": "thousands of digits",
        '{"sampling": {"temperature": NaN}}': "'sampling.temperature' must be a finite number",
        '{"sampling": {"stop": ["a", "b", "c", "d", "e"]}}': "'sampling.stop' lists 5",
        '{"context_window": NaN}': "'context_window' must be a whole number",
        DEEP: "nested too deeply",
        '{"permissions": {"allow": ["write_file([9-0])"]}}': "invalid glob pattern '[9-0]'",
    }
    for text, expected in cases.items():
        fault_ledger.injected("H1")
        seri_home.mkdir(mode=0o700, exist_ok=True)
        (seri_home / "config.json").write_text(text)
        with FakeModel([{"text": "never"}]) as fake:
            result = run(seri("chat", "-p", "hi"), home=seri_home, cwd=project, env=chat_env(fake))
            assert fake.requests == []
        _refused_in_one_line(result, expected, text[:40])
        fault_ledger.survived("H1")


def test_H1_slash_commands_and_stream_oddities_leave_the_session_running(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """Scripted lines: /max-turns with a 5000-digit number, NaN and 1e999, a stream chunk
    nested 100,000 deep, a surrogate pair split across two chunks, absurd usage numbers;
    each bad line is one line on stderr and the next line runs in the same process."""
    split = _sse(_delta("\\ud83d"), _delta("\\ude00 whole"), _delta("", "stop"))
    split = split.replace("\\\\ud83d", "\\ud83d").replace("\\\\ude00", "\\ude00")
    absurd = _sse(
        _delta(
            "counted",
            "stop",
            usage={"prompt_tokens": int("9" * 40), "completion_tokens": -5, "cost": 1e308},
        )
    )
    script = [
        {"raw_sse": f"data: {DEEP}\n\n", **FAST},
        {"raw_sse": split},
        {"raw_sse": absurd},
        {"text": "still here"},
    ]
    lines = [
        f"/max-turns {HUGE}",
        "/max-turns NaN",
        "/max-turns 1e999",
        "deep",
        "split",
        "absurd",
        "last",
    ]
    fault_ledger.injected("H1", 6)
    with FakeModel(script) as fake:
        result = run(
            seri("chat"),
            home=seri_home,
            cwd=project,
            env=chat_env(fake),
            input="\n".join(lines) + "\n",
        )
    one_line_error(result.stderr)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["😀 whole", "counted", "still here"], result.stdout
    assert result.stderr.count("/max-turns needs a whole number") == 3
    assert "nested too deeply" in result.stderr
    with database(seri_home) as conn:
        tokens = conn.execute("SELECT last_input_tokens FROM sessions").fetchall()[0][0]
    assert 0 <= tokens < 10**10
    fault_ledger.survived("H1", 6)


def test_H1_keys_urls_and_encodings(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """An API key with a trailing newline or spaces is stripped (the header carries the key
    alone); one with a space inside is refused by name without being shown; a SERI_BASE_URL
    that is not a URL is a usage error at once (no retries); PYTHONIOENCODING=ascii escapes
    what it cannot show instead of failing."""
    fault_ledger.injected("H1", 5)
    for padded in (KEY + "\n", f"  {KEY} \t"):
        with FakeModel([{"text": "ok"}]) as fake:
            result = run(
                seri("chat", "-p", "hi"),
                home=seri_home,
                cwd=project,
                env={**chat_env(fake), "OPENROUTER_API_KEY": padded},
            )
            sent = fake.request_headers[-1]
        assert result.returncode == 0, result.stderr
        assert sent["authorization"] == f"Bearer {KEY}"
        fault_ledger.survived("H1")
    broken = KEY[:20] + " " + KEY[20:]
    result = run(
        seri("chat", "-p", "hi"),
        home=seri_home,
        cwd=project,
        env={"SERI_BASE_URL": "http://127.0.0.1:9/v1", "OPENROUTER_API_KEY": broken},
    )
    assert result.returncode == 2 and "OPENROUTER_API_KEY holds a character" in result.stderr
    assert KEY[20:] not in result.stderr
    one_line_error(result.stderr)
    fault_ledger.survived("H1")
    for url in ("not a url", "localhost:8080"):
        started = time.monotonic()
        result = run(
            seri("chat", "-p", "hi"),
            home=seri_home,
            cwd=project,
            env={"SERI_BASE_URL": url, "OPENROUTER_API_KEY": KEY},
        )
        assert result.returncode == 2, result.stderr
        assert f"base URL {url!r} (set by SERI_BASE_URL) must be an http" in result.stderr
        assert time.monotonic() - started < 5 and "retrying" not in result.stderr
        one_line_error(result.stderr)
    (seri_home / "config.json").write_text(json.dumps({"base_url": "localhost:8080"}))
    result = run(
        seri("chat", "-p", "hi"), home=seri_home, cwd=project, env={"OPENROUTER_API_KEY": KEY}
    )
    assert result.returncode == 2 and "(set by base_url in config.json)" in result.stderr
    (seri_home / "config.json").unlink()
    fault_ledger.survived("H1")
    with FakeModel([{"text": "café ☃"}]) as fake:
        result = run(
            seri("chat"),
            home=seri_home,
            cwd=project,
            env={**chat_env(fake), "PYTHONIOENCODING": "ascii"},
            input="héllo\n",
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "caf\\xe9 \\u2603\n"
    fault_ledger.survived("H1")


def test_H1_config_json_that_cannot_be_written(
    project: Path, seri_home: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    """`seri trajectory off` (a config.json write) under a file-size limit, on a full disk,
    on a read-only directory: one line naming the file, exit 1 or 2, the old file whole."""
    write_config(seri_home, {"model": "kept/model"})
    before = (seri_home / "config.json").read_bytes()
    fault_ledger.injected("H1")
    limited = run(
        seri("trajectory", "off"), home=seri_home, cwd=project, preexec_fn=file_size_limit(8)
    )
    assert limited.returncode == 1, limited.stderr
    one_line_error(limited.stderr)
    assert "cannot write" in limited.stderr and "config.json" in limited.stderr
    assert (seri_home / "config.json").read_bytes() == before
    fault_ledger.survived("H1")
    for prefix, status in ((_small_disk(tmp_path), 1), (_read_only(seri_home), 2)):
        if prefix is None:
            continue  # not root: no private mount namespace to make the disk in
        fault_ledger.injected("H1")
        result = subprocess.run(
            [*prefix, *seri("trajectory", "off")],
            capture_output=True,
            text=True,
            env=_env(seri_home),
            cwd=project,
            check=False,
        )
        assert result.returncode == status, result.stderr
        one_line_error(result.stderr)
        assert "config.json" in result.stderr, result.stderr
        fault_ledger.survived("H1")
    assert (seri_home / "config.json").read_bytes() == before


def _env(home: Path) -> dict[str, str]:
    from tests.conftest import seri_env

    return seri_env(home)


def _private_mounts() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    return probe.returncode == 0


def _small_disk(tmp_path: Path) -> list[str] | None:
    """Run with the profile on a full 1 MiB tmpfs (a copy of it: the real one stays)."""
    if not _private_mounts():
        return None
    script = (
        'home="$SERI_HOME"; mkdir -p "$1"; cp -a "$home/." "$1.copy"; '
        'mount -t tmpfs -o size=1m tmpfs "$1" && cp -a "$1.copy/." "$1" && '
        'dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null; export SERI_HOME="$1"; shift; exec "$@"'
    )
    return ["unshare", "-m", "sh", "-c", script, "sh", str(tmp_path / "full")]


def _read_only(path: Path) -> list[str] | None:
    if not _private_mounts():
        return None
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, "sh", str(path)]


def test_H1_a_damaged_row_is_reported_as_damage(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """A message row whose body is not JSON: resuming or showing that session says which
    session and which message, exit 2; the other sessions work as before."""
    with FakeModel([{"text": "one"}, {"text": "two"}, {"text": "three"}]) as fake:
        for prompt in ("first", "second"):
            made = run(seri("chat", "-p", prompt), home=seri_home, cwd=project, env=chat_env(fake))
            assert made.returncode == 0, made.stderr
        damaged, healthy = session_ids(seri_home)
        with database(seri_home) as conn:
            conn.execute(
                'UPDATE messages SET body = \'{"role": "user", "te\' '
                "WHERE session_id = ? AND seq = 2",
                (damaged,),
            )
        fault_ledger.injected("H1", 5)
        for command in (
            seri("chat", "--resume", damaged, "-p", "again"),
            seri("sessions", "show", damaged),
            seri("sessions", "show", damaged, "--json"),
            seri("sessions", "export", damaged, "--format", "markdown"),
            seri("trajectory", "export", "--format", "atif", "--session", damaged),
        ):
            result = run(command, home=seri_home, cwd=project, env=chat_env(fake))
            assert result.returncode == 2, result.stderr
            one_line_error(result.stderr)
            assert f"message 2 of session {damaged}" in result.stderr, result.stderr
            assert "damaged" in result.stderr
            fault_ledger.survived("H1")
        other = run(
            seri("chat", "--resume", healthy, "-p", "fine?"),
            home=seri_home,
            cwd=project,
            env=chat_env(fake),
        )
    assert other.returncode == 0, other.stderr


# --- H2 --------------------------------------------------------------------------------------


class _Fuzzer:
    """A fuzz_child.py process: each case runs seri in a fresh fork of it, against one
    loopback model (``fake``, rescripted per case) and one profile (its config.json is
    written per case): what a case leaves in seri.db is the next one's history."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.count = 0
        self.fake = FakeModel([]).start()
        self.home = root / "home"
        self.home.mkdir(mode=0o700)
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "fuzz_child.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=root,
        )

    def run(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        stdin: str = "",
        config: str | None = None,
        files: dict[str, bytes] | None = None,
        home_files: dict[str, bytes] | None = None,
        steps: tuple[dict[str, Any], ...] = (),
    ) -> dict[str, Any]:
        self.count += 1
        case_dir = self.root / f"case{self.count}"
        home, project = self.home, case_dir / "project"
        project.mkdir(parents=True)
        self.fake.script(*steps, {"text": "ok", "repeat": 40})
        (home / "config.json").unlink(missing_ok=True)
        if config is not None:
            (home / "config.json").write_text(config, encoding="utf-8", errors="surrogatepass")
        for name, data in (files or {}).items():
            (project / name).write_bytes(data)
        for name, data in (home_files or {}).items():
            (home / name).parent.mkdir(parents=True, exist_ok=True)
            (home / name).write_bytes(data)
        full_env = {
            "PATH": os.environ["PATH"],
            "HOME": str(case_dir),
            "LANG": "C.UTF-8",
            "SERI_HOME": str(home),
            "SERI_BASE_URL": self.fake.base_url,
            "OPENROUTER_API_KEY": KEY,
            "SERI_SANDBOX": "none",
            **(env or {}),
        }
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(
            json.dumps({"argv": argv, "env": full_env, "cwd": str(project), "stdin": stdin}) + "\n"
        )
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        shutil.rmtree(case_dir, ignore_errors=True)
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.fake.stop()


@pytest.fixture(scope="module")
def fuzzer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Fuzzer]:
    memory = Path("/dev/shm")
    if memory.is_dir() and os.access(memory, os.W_OK):
        root = Path(tempfile.mkdtemp(prefix="seri-fuzz-", dir=memory))
    else:
        root = tmp_path_factory.mktemp("fuzz")
    made = _Fuzzer(root)
    try:
        yield made
    finally:
        made.close()
        shutil.rmtree(root, ignore_errors=True)


def _survived(answer: dict[str, Any], ledger: FaultLedger) -> None:
    stderr = answer["stderr"]
    assert "internal error" not in stderr and "Traceback" not in stderr, stderr
    assert "fuzz_child:" not in stderr, stderr
    assert answer["status"] in (0, 1, 2, 130), answer
    ledger.survived("H2")


texts = st.text(max_size=40)
words = st.sampled_from(
    [
        "chat",
        "sessions",
        "show",
        "compact",
        "rewind",
        "trajectory",
        "memory",
        "export",
        "list",
        "--json",
        "--all",
        "-p",
        "--resume",
        "--continue",
        "--fork",
        "--session",
        "--to",
        "--max-turns",
        "--allow",
        "--since",
        "--focus",
        "prune",
        "--dry-run",
        "on",
        "off",
        "status",
        "approve",
        "reject",
        "pending",
        "--list",
        "--files",
        "--yes",
        "import",
        "-h",
        "--model",
        "--conversation",
    ]
)


@FUZZ
@given(st.lists(st.one_of(words, texts, st.integers().map(str)), max_size=7))
def test_H2_fuzz_argv(fuzzer: _Fuzzer, fault_ledger: FaultLedger, argv: list[str]) -> None:
    fault_ledger.injected("H2")
    _survived(fuzzer.run(argv), fault_ledger)


env_names = st.sampled_from(
    [
        "SERI_BASE_URL",
        "SERI_MODEL",
        "SERI_TRAJECTORY",
        "SERI_SANDBOX",
        "OPENROUTER_API_KEY",
        "SERI_API_KEY",
        "SERI_HOME_X",
        "TZ",
    ]
)
env_values = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30
)


@FUZZ
@given(st.dictionaries(env_names, env_values, max_size=4))
def test_H2_fuzz_environment(
    fuzzer: _Fuzzer, fault_ledger: FaultLedger, env: dict[str, str]
) -> None:
    fault_ledger.injected("H2")
    _survived(fuzzer.run(["chat", "-p", "hi"], env=env), fault_ledger)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
config_keys = st.sampled_from(
    [
        "model",
        "base_url",
        "context_window",
        "max_turns",
        "subagent_max_turns",
        "compaction",
        "sampling",
        "provider",
        "reasoning",
        "trajectory",
        "check",
        "permissions",
        "other",
    ]
)


# Text nested around the depth limit, and numbers of every size: what the bounded reader and
# the ranges of each number must turn into one line (issue 25).
deep_json = st.integers(1, 400).map(lambda n: "[" * n + "]" * n) | st.integers(1, 400).map(
    lambda n: '{"a":' * n + "1" + "}" * n
)
big_numbers = st.integers(min_value=-(10**30), max_value=10**30) | st.sampled_from(
    [0, -1, 2**31, 2**63, 2**64, 10**23, 1e308, -1e308, 0.5]
)
number_keys = st.sampled_from(
    ["context_window", "max_turns", "subagent_max_turns", "max_budget_usd"]
)


@FUZZ
@given(
    st.one_of(
        st.dictionaries(config_keys, json_values, max_size=4).map(json.dumps),
        st.text(max_size=60),
        deep_json,
        st.dictionaries(number_keys, big_numbers, min_size=1, max_size=3).map(json.dumps),
        st.builds(
            lambda key, value: (
                json.dumps({key: {"keep_tokens": value, "elide_bytes": value}})
                if key == "compaction"
                else json.dumps({key: {"max_tokens": value, "seed": value, "top_k": value}})
            ),
            st.sampled_from(["compaction", "sampling"]),
            big_numbers,
        ),
    )
)
def test_H2_fuzz_config(fuzzer: _Fuzzer, fault_ledger: FaultLedger, config: str) -> None:
    fault_ledger.injected("H2")
    _survived(fuzzer.run(["chat", "-p", "hi"], config=config), fault_ledger)
    fault_ledger.injected("H2")
    _survived(fuzzer.run(["trajectory", "status"], config=config), fault_ledger)


slash = st.sampled_from(
    [
        "/compact",
        "/clear",
        "/rewind",
        "/max-turns",
        "/trajectory",
        "/memory",
        "/help",
        "/exit",
        "/unknown",
        "/memory approve",
        "/rewind 1 files",
    ]
)


@FUZZ
@given(st.lists(st.one_of(texts, st.tuples(slash, texts).map(" ".join)), max_size=5))
def test_H2_fuzz_stdin_lines(fuzzer: _Fuzzer, fault_ledger: FaultLedger, lines: list[str]) -> None:
    fault_ledger.injected("H2")
    _survived(fuzzer.run(["chat"], stdin="\n".join(lines) + "\n"), fault_ledger)


sse_pieces = st.one_of(
    st.text(max_size=30).map(lambda t: f"data: {t}\n\n"),
    json_values.map(lambda v: f"data: {json.dumps(v)}\n\n"),
    st.builds(
        lambda text, usage: "data: " + json.dumps(_delta(text, "stop", usage=usage)) + "\n\n",
        texts,
        st.dictionaries(
            st.sampled_from(["prompt_tokens", "cost", "completion_tokens"]), json_values, max_size=3
        ),
    ),
    st.sampled_from(
        [
            "data: [DONE]\n\n",
            ": keep-alive\n\n",
            "event: error\ndata: {}\n\n",
            "\r\n",
            "\r",
            "data: x",
            'data: {"choices": [{"delta": {"tool_calls": [{}]}}]}\n\n',
        ]
    ),
    deep_json.map(lambda text: f"data: {text}\r\n\r\n"),
    big_numbers.map(
        lambda n: (
            "data: "
            + json.dumps(_delta("n", "stop", usage={"prompt_tokens": n, "completion_tokens": n}))
            + "\n\n"
        )
    ),
)


@FUZZ
@given(st.lists(sse_pieces, max_size=6).map("".join))
def test_H2_fuzz_stream_bytes(fuzzer: _Fuzzer, fault_ledger: FaultLedger, body: str) -> None:
    fault_ledger.injected("H2")
    _survived(fuzzer.run(["chat", "-p", "hi"], steps=({"raw_sse": body},)), fault_ledger)


tool_names = st.sampled_from(
    ["read_file", "write_file", "edit", "glob", "grep", "task", "remember", "nope"]
)


@FUZZ
@given(
    st.lists(
        st.tuples(
            tool_names,
            st.one_of(
                json_values.map(json.dumps),
                st.dictionaries(
                    st.sampled_from(
                        [
                            "path",
                            "content",
                            "pattern",
                            "old_string",
                            "new_string",
                            "offset",
                            "limit",
                            "replace_all",
                            "description",
                            "prompt",
                            "text",
                            "scope",
                        ]
                    ),
                    json_values,
                    max_size=4,
                ).map(json.dumps),
                st.text(max_size=40),
            ),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_H2_fuzz_tool_arguments(
    fuzzer: _Fuzzer, fault_ledger: FaultLedger, calls: list[tuple[str, str]]
) -> None:
    fault_ledger.injected("H2")
    step = {"tool_calls": [_raw_call(f"c{n}", name, args) for n, (name, args) in enumerate(calls)]}
    answer = fuzzer.run(
        ["chat", "--allow", "write_file", "--allow", "edit", "-p", "go"],
        steps=(step,),
        files={"a.txt": b"hello\n"},
    )
    _survived(answer, fault_ledger)


@FUZZ
@given(st.binary(max_size=300), st.sampled_from(["AGENTS.md", "a.txt", ".env"]))
def test_H2_fuzz_files_read(
    fuzzer: _Fuzzer, fault_ledger: FaultLedger, data: bytes, name: str
) -> None:
    fault_ledger.injected("H2")
    calls = [
        call("r", "read_file", path=name),
        call("g", "grep", pattern="a"),
        call("e", "edit", path=name, old_string="a", new_string="b"),
    ]
    answer = fuzzer.run(
        ["chat", "--allow", "edit", "-p", "go"], steps=({"tool_calls": calls},), files={name: data}
    )
    _survived(answer, fault_ledger)


# --- H2: every external source (issue 25) -----------------------------------------------------


@FUZZ
@given(
    st.one_of(
        st.dictionaries(st.sampled_from(["mcpServers", "other"]), json_values, max_size=2).map(
            json.dumps
        ),
        deep_json,
        st.binary(max_size=80).map(lambda b: b.decode("latin-1")),
        st.dictionaries(
            st.text(max_size=8),
            st.fixed_dictionaries(
                {"command": texts},
                optional={"args": st.lists(texts, max_size=2), "env": json_values},
            ),
            max_size=2,
        ).map(lambda servers: json.dumps({"mcpServers": servers})),
    )
)
def test_H2_fuzz_project_mcp_json(fuzzer: _Fuzzer, fault_ledger: FaultLedger, text: str) -> None:
    fault_ledger.injected("H2")
    files = {".mcp.json": text.encode("utf-8", "surrogatepass")}
    _survived(fuzzer.run(["chat", "-p", "hi"], files=files), fault_ledger)
    fault_ledger.injected("H2")
    _survived(fuzzer.run(["mcp", "list"], files=files), fault_ledger)


legacy_lines = st.one_of(
    json_values.map(json.dumps),
    deep_json,
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
    st.sampled_from(
        [
            '{"role": "user", "content": "hi"}',
            '{"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "t",'
            ' "toolName": "read_file", "input": "[[[[[["}]}',
            '{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "t",'
            ' "toolName": "read_file", "output": {"type": "json", "value": [[[[1]]]]}}]}',
        ]
    ),
)


@FUZZ
@given(st.lists(legacy_lines, max_size=5), st.sampled_from(["\n", "\r\n"]))
def test_H2_fuzz_legacy_session_files(
    fuzzer: _Fuzzer, fault_ledger: FaultLedger, lines: list[str], ending: str
) -> None:
    """The older release's sessions/*.jsonl: imported, or refused by line, never a crash."""
    header = json.dumps(
        {"id": f"legacy-{fuzzer.count}", "cwd": "/", "systemPrompt": "s", "permissionMode": "auto"}
    )
    data = ending.join([header, *lines]).encode("utf-8", "surrogatepass")
    fault_ledger.injected("H2")
    answer = fuzzer.run(
        ["sessions", "list", "--all"], home_files={f"sessions/f{fuzzer.count}.jsonl": data}
    )
    _survived(answer, fault_ledger)


# Which test fuzzes each external source (seri.pure.inputs.bounded_input.SOURCES); a source without
# one fails tests/test_bounded_sources.py.
FUZZED_SOURCES = {
    "provider stream": "tests/faults/test_hostile_input.py::test_H2_fuzz_stream_bytes",
    "provider answer": "tests/property/inputs/test_bounded_input.py::test_H2_fuzz_provider_answers",
    "mcp stdio": "tests/mcp/test_bounded_servers.py::test_H2_fuzz_mcp_stdio_lines",
    "mcp http": "tests/mcp/test_bounded_servers.py::test_H2_fuzz_mcp_http_bodies",
    "acp stdio": "tests/property/inputs/test_bounded_input.py::test_H2_fuzz_acp_lines",
    "config.json": "tests/faults/test_hostile_input.py::test_H2_fuzz_config",
    ".mcp.json": "tests/faults/test_hostile_input.py::test_H2_fuzz_project_mcp_json",
    "legacy session file": "tests/faults/test_hostile_input.py::test_H2_fuzz_legacy_session_files",
    "tool arguments": "tests/faults/test_hostile_input.py::test_H2_fuzz_tool_arguments",
}


# --- H1: numbers out of range (issue 25) -----------------------------------------------------

ABSURD = "99999999999999999999999"


def test_H1_numbers_out_of_range_on_the_command_line(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """Each is one line naming the option and its range, exit 2 (MismatchError and
    OverflowError before)."""
    with FakeModel([{"text": "hello"}]) as fake:
        made = run(seri("chat", "-p", "hi"), home=seri_home, cwd=project, env=chat_env(fake))
    assert made.returncode == 0, made.stderr
    (session,) = session_ids(seri_home)
    cases = {
        ("sessions", "--limit", ABSURD): "--limit must be a whole number from 1 to 1,000,000",
        ("sessions", "list", "--limit", "9223372036854775807"): "--limit must be",
        ("sessions", "search", "x", "--limit", ABSURD): "--limit must be a whole number from 1",
        ("chat", "--max-turns", ABSURD, "-p", "x"): "--max-turns must be a whole number from 1",
        ("chat", "--max-budget-usd", "1e400", "-p", "x"): "--max-budget-usd must be an amount",
        ("pin", "--session", session, "--rm", ABSURD): "a pin number",
        ("rewind", "--session", session, "--to", ABSURD): "a user message number is needed",
    }
    for argv, expected in cases.items():
        fault_ledger.injected("H1")
        result = run(seri(*argv), home=seri_home, cwd=project, env=_env(seri_home))
        _refused_in_one_line(result, expected, argv)
        fault_ledger.survived("H1")


def test_H1_numbers_out_of_range_in_config(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    big = 10**23
    cases = {
        "context_window": ({"context_window": big}, "from 1 to 100,000,000"),
        "max_turns": ({"max_turns": big}, "'max_turns' must be a whole number from 1 to"),
        "keep": ({"compaction": {"keep_tokens": big}}, "'compaction.keep_tokens' must be"),
        "elide": ({"compaction": {"elide_bytes": 2**64}}, "'compaction.elide_bytes' must be"),
        "answer": ({"sampling": {"max_tokens": big}}, "'sampling.max_tokens' must be"),
        "seed": ({"sampling": {"seed": 2**64}}, "'sampling.seed' must be a whole number"),
        "budget": ({"max_budget_usd": 1e300}, "'max_budget_usd' must be an amount"),
        "search": ({"mcp": {"tool_search_threshold": big}}, "must be a whole number of tools"),
        "wait": ({"mcp": {"startup_wait": 1e300}}, "'mcp.startup_wait' must be seconds"),
    }
    for name, (config, expected) in cases.items():
        fault_ledger.injected("H1")
        write_config(seri_home, config)
        with FakeModel([{"text": "never"}]) as fake:
            result = run(seri("chat", "-p", "hi"), home=seri_home, cwd=project, env=chat_env(fake))
        _refused_in_one_line(result, expected, name)
        fault_ledger.survived("H1")


def test_H1_numbers_out_of_range_in_a_scripted_session_and_in_tool_arguments(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """/max-turns with 23 digits is one line and the session goes on to its next line;
    read_file with an offset and a limit of 26 digits is an answer, not a crash."""
    (project / "x.txt").write_text("hello\n")
    huge = "1" + "0" * 25
    script = [
        {
            "tool_calls": [
                _raw_call("o", "read_file", '{"path": "x.txt", "offset": ' + huge + "}"),
                _raw_call("l", "read_file", '{"path": "x.txt", "limit": ' + huge + "}"),
            ]
        },
        {"text": "went on"},
    ]
    fault_ledger.injected("H1", 3)
    with FakeModel(script) as fake:
        result = run(
            seri("chat"),
            home=seri_home,
            cwd=project,
            env=chat_env(fake),
            input=f"/max-turns {ABSURD}\nread it\n",
        )
        results = _tool_results(fake)
    one_line_error(result.stderr)
    assert "/max-turns needs a whole number from 1 to 1,000,000" in result.stderr
    assert result.stdout == "went on\n", result.stderr
    assert "past the end" in results["o"]
    assert "hello" in results["l"]
    fault_ledger.survived("H1", 3)
