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
import shlex
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

# The project's notes, which the model reads first: the bulk of what compaction later
# turns into a few lines of recap (so the demo's compaction visibly shrinks the history).
NOTES = "# Notes\n\n" + "".join(
    f"- {day}: greeted the {who} by hand; the program should do this for us.\n"
    for day in ("Mon", "Tue", "Wed", "Thu", "Fri")
    for who in ("world", "team", "visitors", "neighbours", "new starters", "old friends") * 8
)

SCRIPT = [
    {
        "text": "Let me read the notes first.",
        "tool_calls": [
            {"id": "call_0", "name": "read_file", "arguments": {"path": "NOTES.md"}},
        ],
    },
    {
        "text": "I'll write the program first.",
        "tool_calls": [
            {
                "id": "call_1",
                "name": "write_file",
                "arguments": {"path": "hello.py", "content": PROGRAM},
            }
        ],
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
    },
    {
        "tool_calls": [
            {"id": "call_3", "name": "bash", "arguments": {"command": "python3 hello.py"}}
        ],
    },
    {
        "text": "Done: hello.py prints `Hello there, world`.",
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


def step(title: str, note: str = "") -> None:
    print(f"\n\033[1m== {title}\033[0m", flush=True)
    if note:
        print(note, flush=True)


def seri(*args: str, env: dict[str, str], cwd: Path, pipe: str | None = None) -> int:
    """Run seri, first printing the command as it can be pasted into a shell (quoted)."""
    command = shlex.join(["seri", *args]) + (f" | {pipe}" if pipe else "")
    print(f"$ {command}", flush=True)
    if pipe:
        real = shlex.join([SERI, *args]) + " | " + pipe
        return subprocess.run(real, shell=True, env=env, cwd=cwd, check=False).returncode
    return subprocess.run([SERI, *args], env=env, cwd=cwd, check=False).returncode


def main() -> int:
    workdir = Path(tempfile.mkdtemp(prefix="seri-demo-"))
    home, project = workdir / "profile", workdir / "project"
    project.mkdir()
    (project / "NOTES.md").write_text(NOTES)
    home.mkdir()
    # A tiny keep budget, so that compacting this short session has something to evict.
    (home / "config.json").write_text('{"compaction": {"keep_tokens": 40}}\n')
    with FakeModel(SCRIPT) as fake:
        # A model server on loopback needs no API key.
        env = {
            **{k: v for k, v in os.environ.items() if k not in ("SERI_API_KEY", "SERI_MODEL")},
            "SERI_HOME": str(home),
            "SERI_BASE_URL": fake.base_url,
            "SERI_MODEL": "demo/scripted-model",
            # The demo runs through without stopping: `sessions show` pages on a terminal.
            "SERI_PAGER": "cat",
        }
        print(
            "The commands below run in a scratch project with these settings; paste them into\n"
            "your shell to run the commands yourself (seri is .venv/bin/seri in this checkout):\n"
            f"  cd {shlex.quote(str(project))}\n"
            f"  export SERI_HOME={shlex.quote(str(home))} SERI_MODEL=demo/scripted-model",
            flush=True,
        )
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
        step(
            "Sessions of the older release, imported from sessions/*.jsonl on first use",
            "(one of the three files ends in a line cut off mid-write, as a killed process"
            " leaves it:\n seri leaves that line out and says so; the other lines are kept)",
        )
        (home / "sessions").mkdir()
        for fixture in sorted(LEGACY.glob("*.jsonl")):
            shutil.copy2(fixture, home / "sessions" / fixture.name)
        seri("sessions", "--all", env=env, cwd=project)
        seri("sessions", "show", "e5f6a7b8", env=env, cwd=project)
    print(
        f"\nThe demo's profile is in {home}; look around with"
        f" `SERI_HOME={shlex.quote(str(home))} .venv/bin/seri sessions --all`,"
        f" and delete {shlex.quote(str(workdir))} when done."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
