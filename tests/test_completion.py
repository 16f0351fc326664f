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
    """What bash's completion would offer for ``line`` (the cursor at its end)."""
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
    return done.stdout.split()


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
    fish = require_program("fish")
    session = _session(run_seri, seri_home, project, "a1b2c3d4-fish")
    script = seri_home / "seri.fish"
    script.write_text(run_seri("completion", "fish").stdout)
    env = {**_env(seri_home), "HOME": str(seri_home), "XDG_CONFIG_HOME": str(seri_home)}

    def complete(line: str) -> list[str]:
        done = subprocess.run(
            [fish, "--no-config", "-c", f"source {script}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            check=True,
            timeout=30,
        )
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

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
    program = f"autoload -U compinit; compinit -u -d {seri_home}/zcompdump; {script}\n"
    program += "print -r -- ${_comps[seri]}; whence -w _seri"
    seri_home.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [zsh, "-f", "-c", program],
        capture_output=True,
        text=True,
        check=False,
        env={**_env(seri_home), "HOME": str(seri_home)},
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["_seri", "_seri: function"]


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
