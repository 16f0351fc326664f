"""`make try`: seri chat on your terminal, offline, against the loopback model.

No key, no network: a scripted model (scripts/fake_model.py) on 127.0.0.1 plays the other
side in a scratch project. Your first message gets a short tour (it reads a file, asks to
edit it and to run it: answer the approvals as you like); after that the model repeats
what you type, so the prompt, the keys and the slash commands (/help, /status, /diff,
/last, /clear ...) can be tried at leisure. Ctrl-D leaves.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.fake_model import FakeModel  # noqa: E402

SERI = str(Path(sys.executable).with_name("seri"))
PROGRAM = 'def greet(name):\n    return "hi " + name\n\nprint(greet("world"))\n'
ANSWER = """\
Done. What changed:

| file | change |
| --- | --- |
| `hello.py` | the greeting is *friendlier* |

Run it again with:

```sh
python3 hello.py
```

From here on this loopback model only repeats what you type; try `/help`."""

TOUR = [
    {
        "text": "I'll look at the program first.",
        "tool_calls": [{"id": "t1", "name": "read_file", "arguments": {"path": "hello.py"}}],
    },
    {
        "text": "Now a friendlier greeting.",
        "tool_calls": [
            {
                "id": "t2",
                "name": "edit",
                "arguments": {"path": "hello.py", "old_string": '"hi "', "new_string": '"hello, "'},
            }
        ],
    },
    {"tool_calls": [{"id": "t3", "name": "bash", "arguments": {"command": "python3 hello.py"}}]},
    {"text": ANSWER, "piece_chars": 3},
]
ECHOES = [{"text_from_last_user": True, "repeat": 500}]


def main() -> int:
    if not sys.stdin.isatty():
        print("make try: run it in a terminal (it is an interactive chat)", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="seri-try-"))
    home, project = workdir / "profile", workdir / "project"
    project.mkdir()
    (project / "hello.py").write_text(PROGRAM)
    with FakeModel([*TOUR, *ECHOES], models=("loopback/tour",)) as fake:
        env = {
            **{k: v for k, v in os.environ.items() if k not in ("SERI_API_KEY", "SERI_MODEL")},
            "SERI_HOME": str(home),
            "SERI_BASE_URL": fake.base_url,  # on loopback: no API key needed
            "SERI_MODEL": "loopback/tour",
        }
        print(
            f"seri chat in a scratch project ({project}) against a scripted model on loopback.\n"
            "Type anything for a short tour (it reads, edits and runs hello.py, asking first);"
            " Ctrl-D leaves.\n",
            flush=True,
        )
        status = subprocess.run([SERI, "chat"], env=env, cwd=project, check=False).returncode
    print(f"\nThe scratch project and profile are in {shlex.quote(str(workdir))}.")
    return status


if __name__ == "__main__":
    sys.exit(main())
