"""What seri knows about particular commands: which wrap another command, which write files.

The wrappers (``env``, ``sudo``, ``timeout``, ``xargs``...) are looked through so that rules
see the command that really runs; git's global options are dropped so rules see the
subcommand; the well-known writers (``tee``, ``cp``, ``dd of=``, ``sed -i``...) name the files
they write, for the protected-path check. Add a command here to teach seri about it.
"""

from __future__ import annotations

import re

from seri.pure.tools.shell_lexer import Word

# Shells whose -c script is split in turn (shell_split).
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "busybox"})
# A leading ``NAME=value`` (``env`` takes them too): not the command.
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")

# Wrappers that run their arguments as a command, with the options (by name)
# that take a separate value, so the value is not mistaken for the command.
_WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "sudo": frozenset(
        {
            "-u",
            "--user",
            "-g",
            "--group",
            "-C",
            "-h",
            "--host",
            "-p",
            "--prompt",
            "-r",
            "--role",
            "-t",
            "--type",
            "-U",
            "--other-user",
            "-D",
            "--chdir",
            "-T",
            "--command-timeout",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "setsid": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "xargs": frozenset(
        {
            "-I",
            "-i",
            "-n",
            "-P",
            "-d",
            "-L",
            "-l",
            "-s",
            "-E",
            "-e",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--max-lines",
            "--max-chars",
            "--arg-file",
            "--replace",
            "--eof",
        }
    ),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
}
# Wrappers whose first plain argument is not the command but a value (a duration).
_WRAPPERS_WITH_LEADING_VALUE = frozenset({"timeout"})

# git's global options (before the subcommand) that take a separate value.
_GIT_VALUE_OPTIONS = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--exec-path",
        "--super-prefix",
    }
)

# Commands whose file arguments they write, for the protected-path check.
_LAST_ARG_WRITERS = frozenset({"cp", "mv", "ln", "install", "rsync"})
# Commands that create, change, or remove every file they are given.
_ALL_ARGS_WRITERS = frozenset({"touch", "truncate", "rm", "rmdir", "unlink", "shred", "mkdir"})
# ... after a first operand that is not a file (a mode, an owner).
_AFTER_FIRST_WRITERS = frozenset({"chmod", "chown", "chgrp"})
# Editors in place: with -i they rewrite the files after their script.
_IN_PLACE_EDITORS = frozenset({"sed", "perl"})


class OpaqueError(Exception):
    """One segment runs something that cannot be known before it runs."""


def unwrap(words: list[Word]) -> list[Word]:
    """Drop wrappers (``env X=1``, ``sudo -u u``, ``timeout 5``, ``xargs -n1``).

    A wrapper with nothing to wrap (``env``, ``xargs``) is itself the command.
    """
    original = words
    while words and not words[0].computed:
        name = basename(words[0].text)
        if name not in _WRAPPERS:
            return words
        if name == "command" and any(w.text in {"-v", "-V"} for w in words[1:2]):
            return words  # "command -v x" looks x up; it does not run it
        value_options = _WRAPPERS[name]
        i = 1
        while i < len(words):
            text = words[i].text
            if text == "--":
                i += 1
                break
            if name == "env" and text.startswith(("-S", "--split-string")):
                raise OpaqueError("env -S is not analysed")
            if text.startswith("-") and len(text) > 1:
                i += 2 if text in value_options else 1
            elif name == "env" and ASSIGNMENT.match(text):
                i += 1
            else:
                break
        if name in _WRAPPERS_WITH_LEADING_VALUE and i < len(words):
            i += 1
        words = words[i:]
        while words and not words[0].quoted and ASSIGNMENT.match(words[0].text):
            words.pop(0)
    return words or original


def git_without_global_options(words: list[Word]) -> list[Word]:
    """``git -C . -c k=v push`` becomes ``git push``, so rules see the subcommand."""
    i = 1
    while i < len(words) and words[i].text.startswith("-"):
        text = words[i].text
        if text in {"-c", "--config-env"} and i + 1 < len(words):
            _refuse_git_alias(words[i + 1].text)
        if text.startswith("-c") and len(text) > 2:
            _refuse_git_alias(text[2:])
        i += 2 if text in _GIT_VALUE_OPTIONS else 1
    return [words[0], *words[i:]]


def _refuse_git_alias(setting: str) -> None:
    # "git -c alias.x='!rm y' x" runs a shell command no rule can see.
    if setting.lower().startswith("alias.") and "=!" in setting:
        raise OpaqueError("a git alias defined on the command line runs a shell command")


def written_arguments(words: tuple[str, ...]) -> tuple[str, ...]:
    """Files a well-known writer is told to write: ``tee F``, ``cp A F``, ``dd of=F``."""
    if not words:
        return ()
    name, args = basename(words[0]), [w for w in words[1:] if not w.startswith("-")]
    if name == "tee":
        return tuple(args)
    if name in _LAST_ARG_WRITERS and len(args) >= 2:
        return (args[-1],)
    if name == "dd":
        return tuple(w[3:] for w in words[1:] if w.startswith("of="))
    if name in _ALL_ARGS_WRITERS:
        return tuple(args)
    if name in _AFTER_FIRST_WRITERS:
        return tuple(args[1:])
    if name in _IN_PLACE_EDITORS:
        return _edited_in_place(words[1:], args)
    return ()


def _edited_in_place(options_and_args: tuple[str, ...], args: list[str]) -> tuple[str, ...]:
    """``sed -i 's/a/b/' F`` and ``perl -pi -e '...' F`` rewrite F."""
    flags = [w for w in options_and_args if w.startswith("-") and not w.startswith("--")]
    in_place = any(w.startswith("--in-place") for w in options_and_args) or any(
        "i" in w[1:].split(".", 1)[0] for w in flags
    )
    if not in_place:
        return ()
    scripted = any(
        w in ("-e", "-f", "--expression", "--file") or w.startswith(("-e", "-f")) for w in flags
    ) or any(w.startswith(("--expression", "--file")) for w in options_and_args)
    # Without -e the first operand is the script; the values of -e and -f are operands too,
    # so whatever they are, every operand after them is one of the files.
    return tuple(args if scripted else args[1:])


def basename(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1] if "/" in word else word
