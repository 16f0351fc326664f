"""`seri completion bash|zsh|fish`: the scripts complete subcommands, their words and options,
and session ids, in the real shells."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SERI, RunSeri, seri_env
from tests.terminal_programs import require_program

BIN = str(Path(SERI).parent)


def _session(run_seri: RunSeri, seri_home: Path, project: Path, name: str) -> str:
    """A stored session, made by importing an older-release file (no model needed)."""
    sessions = seri_home / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    header = f'{{"id": "{name}", "cwd": "{project}", "systemPrompt": "", "permissionMode": "auto"}}'
    (sessions / f"{name}.jsonl").write_text(header + '\n{"role": "user", "content": "hi"}\n')
    run_seri("sessions", "--json")
    listed = run_seri("completion", "session-ids").stdout.split()
    return next(sid for sid in listed if sid)


def _env(seri_home: Path) -> dict[str, str]:
    env = seri_env(seri_home)
    env["PATH"] = f"{BIN}:{env.get('PATH', '')}"
    return env


def _bash_complete(line: str, script: str, env: dict[str, str], cwd: Path) -> list[str]:
    """What bash's completion would offer for ``line`` (the cursor at its end), one offer a
    line as printed (an offered id may hold a quoted space)."""
    words = line.split(" ")
    program = f"""{script}
COMP_WORDS=({" ".join(repr(w) for w in words)})
COMP_CWORD={len(words) - 1}
_seri_complete
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    bash = require_program("bash")
    done = subprocess.run(
        [bash, "--norc", "-c", program],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
        timeout=30,
    )
    return done.stdout.splitlines()


def _fish_complete(line: str, script: Path, seri_home: Path, cwd: Path) -> list[str]:
    """What fish's completion would offer for ``line``, with the script at ``script``."""
    fish = require_program("fish")
    env = {**_env(seri_home), "HOME": str(seri_home), "XDG_CONFIG_HOME": str(seri_home)}
    done = subprocess.run(
        [fish, "--no-config", "-c", f"source {script}; complete -C '{line}'"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
        timeout=30,
    )
    return [row.split("\t")[0] for row in done.stdout.splitlines()]


def _zsh_with_compinit(program: str, seri_home: Path, cwd: Path | None = None) -> str:
    """What zsh prints running ``program`` after compinit (its dump kept in ``seri_home``)."""
    zsh = require_program("zsh")
    seri_home.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [zsh, "-f", "-c", f"autoload -U compinit; compinit -u -d {seri_home}/zcompdump\n{program}"],
        capture_output=True,
        text=True,
        env={**_env(seri_home), "HOME": str(seri_home)},
        cwd=cwd,
        check=False,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_bash_completes_commands_words_options_and_session_ids(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    session = _session(run_seri, seri_home, project, "a1b2c3d4-bash")
    script = run_seri("completion", "bash").stdout
    env = _env(seri_home)
    assert _bash_complete("seri ch", script, env, project) == ["chat"]
    assert _bash_complete("seri co", script, env, project) == ["compact", "completion"]
    assert _bash_complete("seri sessions s", script, env, project) == ["show", "search"]
    assert "--continue" in _bash_complete("seri chat --c", script, env, project)
    assert _bash_complete("seri chat --resume ", script, env, project) == [session]
    assert _bash_complete("seri sessions show a1", script, env, project) == [session]
    assert _bash_complete("seri compact --session ", script, env, project) == [session]
    assert _bash_complete("seri trajectory ", script, env, project)[:5] == [
        "export",
        "off",
        "on",
        "status",
        "prune",
    ]


def test_fish_completes_commands_words_options_and_session_ids(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    require_program("fish")
    session = _session(run_seri, seri_home, project, "a1b2c3d4-fish")
    script = seri_home / "seri.fish"
    script.write_text(run_seri("completion", "fish").stdout)

    def complete(line: str) -> list[str]:
        return _fish_complete(line, script, seri_home, project)

    assert "chat" in complete("seri ")
    assert "show" in complete("seri sessions ")
    assert "--continue" in complete("seri chat --")
    assert complete("seri chat --resume ") == [session]
    assert complete("seri sessions show ") == [session]


def test_zsh_loads_the_script_and_registers_it(run_seri: RunSeri, seri_home: Path) -> None:
    zsh = require_program("zsh")
    script = run_seri("completion", "zsh").stdout
    check = subprocess.run([zsh, "-n", "-c", script], capture_output=True, text=True, check=False)
    assert check.returncode == 0, check.stderr
    shown = _zsh_with_compinit(
        f"{script}\nprint -r -- ${{_comps[seri]}}; whence -w _seri", seri_home
    )
    assert shown.split("\n")[:2] == ["_seri", "_seri: function"]


def test_completion_needs_a_shell_it_knows(run_seri: RunSeri) -> None:
    result = run_seri("completion", "tcsh")
    assert result.returncode == 2
    assert result.stderr.startswith("seri: ") and "see seri completion --help" in result.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_session_ids_create_no_profile(run_seri: RunSeri, seri_home: Path, shell: str) -> None:
    assert run_seri("completion", shell).returncode == 0
    ids = run_seri("completion", "session-ids")
    assert ids.returncode == 0 and ids.stdout == ""
    assert not seri_home.exists()
    assert os.environ.get("SERI_HOME") != str(seri_home)


# --- ids are data: no shell runs one ---------------------------------------------------------


def _hostile_ids(tmp: Path) -> tuple[list[str], list[Path]]:
    """Stored ids that would run a command if a shell evaluated them, and the files each
    would create."""
    markers = [tmp / f"ran-{n}" for n in range(5)]
    ids = [
        f"x$(touch {markers[0]})",
        f"y`touch {markers[1]}`",
        f"z'; touch {markers[2]}; '",
        f'w"$(touch {markers[3]})"',
        f"v\n$(touch {markers[4]})",
    ]
    return ids, markers


def _store_ids(run_seri: RunSeri, seri_home: Path, project: Path, ids: list[str]) -> None:
    """Rows with these ids, written into the real store as an older seri or a hand could."""
    import apsw

    _session(run_seri, seri_home, project, "a1b2c3d4-plain")
    conn = apsw.Connection(str(seri_home / "seri.db"))
    for n, session_id in enumerate(ids):
        conn.execute(
            "INSERT INTO sessions(id, project, created, updated) VALUES (?, ?, ?, ?)",
            (session_id, str(project), 1.0, 2.0 + n),
        )
    conn.close()


def test_no_shell_evaluates_a_stored_id(
    run_seri: RunSeri, seri_home: Path, project: Path, tmp_path: Path
) -> None:
    """A stored id holding `$(...)`, backticks, quotes or a line break: bash, zsh and fish
    offer it (quoted) or leave it out, and never run what it says."""
    ids, markers = _hostile_ids(tmp_path)
    _store_ids(run_seri, seri_home, project, ids)
    listed = run_seri("completion", "session-ids").stdout.splitlines()
    assert set(ids[:4]) <= set(listed) and ids[4] not in listed
    env = _env(seri_home)

    bash = require_program("bash")
    script = run_seri("completion", "bash").stdout
    for line in ("seri chat --resume ", "seri sessions show ", "seri pin --session x"):
        offered = _bash_complete(line, script, env, project)
        assert not [m.name for m in markers if m.exists()], f"bash ran a stored id ({line})"
        # What bash inserts is each id quoted: the shell reads it back as the id itself.
        for quoted in offered:
            back = subprocess.run(
                [bash, "--norc", "-c", f"printf %s {quoted}"],
                capture_output=True,
                text=True,
                check=True,
                timeout=30,
            )
            assert back.stdout in listed, (quoted, back.stdout)
    assert f"x\\$\\(touch\\ {markers[0]}\\)" in offered

    program = (
        f"{run_seri('completion', 'zsh').stdout}\n"
        'compadd() { print -rl -- "$@" }\n'
        "words=(seri chat --resume ''); CURRENT=4; _seri\n"
        "words=(seri sessions show ''); CURRENT=4; _seri\n"
    )
    assert set(ids[:4]) <= set(_zsh_with_compinit(program, seri_home, project).splitlines())

    require_program("fish")
    fish_script = seri_home / "seri.fish"
    fish_script.write_text(run_seri("completion", "fish").stdout)
    for line in ("seri chat --resume ", "seri sessions show "):
        assert set(ids[:4]) <= set(_fish_complete(line, fish_script, seri_home, project))

    ran = [marker.name for marker in markers if marker.exists()]
    assert not ran, f"a shell ran a stored id: {ran}"
