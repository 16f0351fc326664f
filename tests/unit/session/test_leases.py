"""Leases on a real store: taken, refused, given back, and taken over from the dead."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from seri.io.session import conversations, leases, session_table
from seri.io.session.store import open_store
from seri.pure.session.leases import Holder
from tests.conftest import SERI, RunSeri, seri_env


def _model_env(base_url: str) -> dict[str, str]:
    """What a `seri chat` of these tests needs to reach the loopback fake model: its address
    and an OpenRouter-shaped key."""
    return {"OPENROUTER_API_KEY": "sk-or-v1-" + "ab" * 32, "SERI_BASE_URL": base_url}


def _session(home: Path) -> str:
    store = open_store(home)
    session_table.create_session(
        store, session_id="s1", project="/p", now=1.0, model="m", system_prompt="", prompt_hashes={}
    )
    store.close()
    return "s1"


def test_a_lease_is_exclusive_and_given_back(tmp_path: Path) -> None:
    _session(tmp_path)
    store = open_store(tmp_path)
    mine = leases.Lease.take(store, "s1", "seri chat")
    # Another live process (this test's parent, say) asks: refused, named by its pid.
    other = Holder(os.getppid(), socket.gethostname(), leases.start_token(os.getppid()), "x")
    with pytest.raises(leases.SessionBusy, match=rf"seri chat \(pid {os.getpid()} on host"):
        leases.take(store, "s1", other)
    mine.close()
    assert leases.take(store, "s1", other) is None
    assert leases.holder_of(store, "s1") == Holder(
        other.pid, other.host, other.started, "x", other.since
    )


def test_the_lease_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    _session(tmp_path)
    store = open_store(tmp_path)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    gone = Holder(int(dead.stdout), socket.gethostname(), "boot:1", "seri chat", 1.0)
    leases.take(store, "s1", gone)
    stale = leases.take(store, "s1", leases.this_process("seri chat"))
    assert stale is not None and stale.pid == gone.pid


def test_a_reused_pid_is_not_the_holder(tmp_path: Path) -> None:
    """The pid is alive, but it started later than the lease's holder: the holder is gone."""
    _session(tmp_path)
    store = open_store(tmp_path)
    parent = os.getppid()
    reused = Holder(parent, socket.gethostname(), "another-boot:12345", "seri chat", 1.0)
    leases.take(store, "s1", reused)
    assert leases.take(store, "s1", leases.this_process("seri chat")) == reused


def test_a_lease_held_on_another_host_counts_as_live(tmp_path: Path) -> None:
    _session(tmp_path)
    store = open_store(tmp_path)
    elsewhere = Holder(1, "some-other-host", "", "seri chat", 1.0)
    leases.take(store, "s1", elsewhere)
    with pytest.raises(leases.SessionBusy, match="on host some-other-host"):
        leases.take(store, "s1", leases.this_process("seri chat"))


def test_start_tokens_tell_processes_apart() -> None:
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc on this system: leases fall back to the pid alone")
    assert leases.start_token(os.getpid()) == leases.start_token(os.getpid()) != ""
    assert leases.start_token(os.getpid()) != leases.start_token(1)  # init started at boot


def test_an_append_from_a_stale_view_is_refused_whole(tmp_path: Path) -> None:
    """The revision is compared inside the append's own IMMEDIATE transaction: a writer whose
    view is out of date (someone appended since) stores nothing, so nothing interleaves."""
    from seri.pure.inputs.errors import SessionChanged
    from seri.pure.session.records import Message

    _session(tmp_path)
    a, b = open_store(tmp_path), open_store(tmp_path)
    seen = session_table.load_state(a, "s1").revision
    conversations.append_messages(
        b, "s1", [Message(role="user", text="b's turn")], 2.0, revision=seen
    )
    with pytest.raises(SessionChanged, match="changed by another process"):
        conversations.append_messages(
            a, "s1", [Message(role="user", text="a's turn")], 3.0, revision=seen
        )
    assert [m.text for m in conversations.load_messages(a, "s1")] == ["b's turn"]


def test_clear_gives_the_old_session_back_and_fork_says_where_it_came_from(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    """A running chat holds its session: another resume is refused. After /clear the old
    session is free (another process resumes it) while the chat goes on in a new one; a
    --fork copy names its source in `seri sessions show`."""
    import json
    import time

    from scripts.fake_model import FakeModel

    with FakeModel(
        [{"text": "first answer"}, {"text": "other"}, {"text": "forked"}, {"text": "second answer"}]
    ) as fake:
        model = _model_env(fake.base_url)
        live = subprocess.Popen(
            [SERI, "chat"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=seri_env(seri_home, model),
            cwd=project,
        )
        assert live.stdin is not None and live.stdout is not None
        live.stdin.write("first\n")
        live.stdin.flush()
        assert live.stdout.readline() == "first answer\n"
        store = open_store(seri_home)
        old = session_table.list_sessions(store, None)[0].id
        store.close()

        def resume(*extra: str) -> subprocess.CompletedProcess[str]:
            return run_seri("chat", "--resume", old, *extra, "-p", "hi", env=model)

        busy = resume()
        assert busy.returncode == 1 and f"pid {live.pid}" in busy.stderr, busy.stderr
        live.stdin.write("/clear\n")
        live.stdin.flush()
        assert live.stdout.readline() == old + "\n"  # /clear prints the old id on stdout
        deadline = time.monotonic() + 10
        while True:
            freed = resume()
            if freed.returncode == 0 or time.monotonic() > deadline:
                break
        assert freed.returncode == 0, freed.stderr
        assert freed.stdout == "other\n"
        forked = resume("--fork")
        assert forked.returncode == 0, forked.stderr
        live.stdin.write("second\n/exit\n")
        live.stdin.close()
        assert live.stdout.read() == "second answer\n"
        assert live.wait(timeout=30) == 0
    store = open_store(seri_home)
    copies = [s for s in session_table.list_sessions(store, None) if s.id != old]
    shown = [session_table.load_state(store, s.id).forked_from for s in copies]
    store.close()
    assert sorted(shown) == ["", old]  # the chat's new session, and the fork
    copy = next(s.id for s, src in zip(copies, shown, strict=True) if src)
    show = run_seri("sessions", "show", copy, "--json")
    assert show.returncode == 0, show.stderr
    assert json.loads(show.stdout.splitlines()[0])["forked_from"] == old


def _proc_state(pid: int) -> str:
    raw = Path(f"/proc/{pid}/stat").read_bytes()
    return raw[raw.rfind(b")") + 2 :].split()[0].decode()


def test_a_killed_holder_not_yet_reaped_is_dead(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    """A real `seri chat` holds its session's lease, mid-call, and is killed; its parent (this
    test) does not reap it, so it stays a zombie: its pid exists, its start time is its own.
    The next `seri chat --continue` takes the session over all the same."""
    import signal
    import time

    from scripts.fake_model import FakeModel

    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc on this system")
    steps = [{"text": "first"}, {"stall_seconds": 30}, {"text": "taken over"}]
    with FakeModel(steps) as fake:
        model = _model_env(fake.base_url)
        assert run_seri("chat", "-p", "one", env=model).returncode == 0
        holder = subprocess.Popen(
            [SERI, "chat", "--continue", "-p", "two"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=seri_env(seri_home, model),
            cwd=project,
        )
        in_call = fake.wait_for_requests(2, timeout=30)
        assert in_call == 2, "the holder is in its model call, holding the lease"
        os.kill(holder.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while _proc_state(holder.pid) != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        try:
            assert _proc_state(holder.pid) == "Z"
            took = run_seri("chat", "--continue", "-p", "three", env=model)
        finally:
            holder.wait()  # reaped only now
    assert took.returncode == 0, took.stderr
    assert took.stdout == "taken over\n"
    assert "which is no longer running" in took.stderr and f"pid {holder.pid}" in took.stderr


@pytest.mark.parametrize("pid", [-1, 0, (1 << 22) + 1, 1 << 40])
def test_a_lease_row_with_an_impossible_pid_never_holds_a_session(
    run_seri: RunSeri, seri_home: Path, pid: int
) -> None:
    """A lease row with pid -1 (``kill(-1, 0)`` succeeds: it signals every process), 0 (this
    process group) or past the kernel's limit, on this very host: `seri chat --resume` takes
    the session over."""
    from scripts.fake_model import FakeModel

    with FakeModel([{"text": "first"}, {"text": "second"}]) as fake:
        model = _model_env(fake.base_url)
        assert run_seri("chat", "-p", "one", env=model).returncode == 0
        store = open_store(seri_home)
        session_id = session_table.list_sessions(store, None)[0].id
        with store.write() as conn:
            conn.execute(
                "INSERT INTO leases(session_id, pid, host, started, command, since)"
                " VALUES (?, ?, ?, '', 'seri chat', 1.0)",
                (session_id, pid, socket.gethostname()),
            )
        store.close()
        took = run_seri("chat", "--resume", session_id, "-p", "two", env=model)
    assert took.returncode == 0, took.stderr
    assert took.stdout == "second\n"
    assert f"(pid {pid}), which is no longer running" in took.stderr
