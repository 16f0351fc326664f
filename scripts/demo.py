"""`make demo`: seri's main job end to end, offline, against the loopback model.

A scripted model (scripts/fake_model.py) asks seri to write a small program, edit it,
and run it; seri carries the calls out with its real tools under its real permission
policy, stores the session in SQLite, records the run, and answers. Then the demo shows
what a person or a shell script gets back: the session list, the session, the
trajectory as JSON Lines, a compaction from the shell, and the older release's sessions
imported from $SERI_HOME/sessions/.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.fake_model import FakeModel  # noqa: E402

SERI = str(Path(sys.executable).with_name("seri"))
LEGACY = REPO / "tests" / "fixtures" / "legacy-sessions"

PROGRAM = 'def greet(name):\n    return f"hello, {name}"\n\nprint(greet("world"))\n'

SCRIPT = [
    {
        "text": "I'll write the program first.",
        "tool_calls": [
            {
                "id": "call_1",
                "name": "write_file",
                "arguments": {"path": "hello.py", "content": PROGRAM},
            }
        ],
        "usage": {"prompt_tokens": 900, "completion_tokens": 60},
    },
    {
        "text": "Now make the greeting friendlier.",
        "tool_calls": [
            {
                "id": "call_2",
                "name": "edit",
                "arguments": {
                    "path": "hello.py",
                    "old_string": "hello,",
                    "new_string": "Hello there,",
                },
            }
        ],
        "usage": {"prompt_tokens": 1000, "completion_tokens": 40},
    },
    {
        "tool_calls": [
            {"id": "call_3", "name": "bash", "arguments": {"command": "python3 hello.py"}}
        ],
        "usage": {"prompt_tokens": 1100, "completion_tokens": 20},
    },
    {
        "text": "Done: hello.py prints `Hello there, world`.",
        "usage": {"prompt_tokens": 1200, "completion_tokens": 15},
    },
    # The summarizer's answer when the demo compacts the session from the shell.
    {
        "text": (
            '{"goal": "Write hello.py and make it greet the world", '
            '"progress": ["Wrote hello.py", "Changed the greeting to Hello there", '
            '"Ran python3 hello.py: it prints Hello there, world"], '
            '"blockers": [], "next_steps": ["None: the task is done"]}'
        )
    },
]


def step(title: str) -> None:
    print(f"\n\033[1m== {title}\033[0m", flush=True)


def seri(*args: str, env: dict[str, str], cwd: Path, pipe: str | None = None) -> int:
    shown = "seri " + " ".join(args) + (f" | {pipe}" if pipe else "")
    print(f"$ {shown}", flush=True)
    if pipe:
        command = " ".join([SERI, *(_quote(a) for a in args)]) + " | " + pipe
        return subprocess.run(command, shell=True, env=env, cwd=cwd, check=False).returncode
    return subprocess.run([SERI, *args], env=env, cwd=cwd, check=False).returncode


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def main() -> int:
    workdir = Path(tempfile.mkdtemp(prefix="seri-demo-"))
    home, project = workdir / "profile", workdir / "project"
    project.mkdir()
    (home / "sessions").mkdir(parents=True)
    # A tiny keep budget, so that compacting this short session has something to evict.
    (home / "config.json").write_text('{"compaction": {"keep_tokens": 40}}\n')
    for fixture in sorted(LEGACY.glob("*.jsonl")):
        shutil.copy2(fixture, home / "sessions" / fixture.name)
    with FakeModel(SCRIPT) as fake:
        env = {
            **os.environ,
            "SERI_HOME": str(home),
            "SERI_BASE_URL": fake.base_url,
            "SERI_API_KEY": "demo-key-not-secret",
            "SERI_MODEL": "demo/scripted-model",
        }
        step("A task, run to the end against the loopback model (the answer is on stdout)")
        status = seri(
            "chat",
            "--allow",
            "write_file",
            "--allow",
            "edit",
            "--allow",
            "bash(python3 *)",
            "-p",
            "Write hello.py that greets the world, make it friendly, and run it.",
            env=env,
            cwd=project,
        )
        if status != 0:
            print(f"demo: seri chat exited {status}", file=sys.stderr)
            return status
        step("What seri left in the project")
        print((project / "hello.py").read_text(), end="")
        step("Sessions of this project, and the one just run")
        seri("sessions", env=env, cwd=project)
        listing = subprocess.run(
            [SERI, "sessions", "--json"],
            env=env,
            cwd=project,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        session_id = listing.split('"id": "', 1)[1].split('"', 1)[0]
        seri("sessions", "show", session_id[:8], env=env, cwd=project)
        step("The run's trajectory, for shell scripts")
        seri(
            "trajectory",
            "export",
            pipe="jq -c 'select(.type==\"tool_call\") | {name, arguments}'"
            if shutil.which("jq")
            else "head -5",
            env=env,
            cwd=project,
        )
        step("Compaction from the shell: older messages become one recap, the ledger says so")
        short = session_id[:8]
        seri("compact", "--session", short, "--focus", "the greeting", env=env, cwd=project)
        seri("sessions", "show", session_id[:8], env=env, cwd=project)
        step("Sessions of the older release, imported from sessions/*.jsonl on first use")
        seri("sessions", "--all", env=env, cwd=project)
        seri("sessions", "show", "e5f6a7b8", env=env, cwd=project)
    print(f"\nThe demo's profile is in {home}; delete {workdir} when done.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
