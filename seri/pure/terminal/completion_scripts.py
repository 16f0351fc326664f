"""Shell completion scripts for bash, zsh and fish, made from the commands' own usage texts.

They complete the subcommands, each one's words (``sessions show``, ``trajectory export``)
and options, and session ids after ``--resume``, ``--session`` and ``sessions show``: the
ids come from ``seri completion session-ids`` when Tab is pressed, so they are current.

Ids are data (a stored id may be anything an older file said): no script lets a shell
evaluate them. bash's ``compgen -W`` expands its word list (``$(...)``, backticks), so the
bash script matches ids itself and offers each one quoted (``printf %q``); zsh's ``compadd``
and fish's ``complete -a`` take the command's lines as words and quote what they insert.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from seri.pure.inputs.usage_errors import option_specs, usage_forms

SHELLS = ("bash", "zsh", "fish")
ID_OPTIONS = ("--resume", "--session")
IDS_COMMAND = "seri completion session-ids 2>/dev/null"
_HELP = frozenset({"-h", "--help"})


@attrs.frozen
class CommandWords:
    """What one subcommand takes: its plain words, its flags, its options with a value."""

    words: tuple[str, ...]
    flags: tuple[str, ...]
    valued: tuple[str, ...]


def command_words(doc: str, command: str) -> CommandWords:
    specs = option_specs(doc)
    names = sorted(set(specs) - _HELP)
    words: list[str] = []
    for form in usage_forms(doc, command):
        words.extend(sorted(form.known))
    return CommandWords(
        words=tuple(dict.fromkeys(words)),
        flags=tuple(name for name in names if not specs[name].value),
        valued=tuple(name for name in names if specs[name].value),
    )


def completion_script(shell: str, commands: Mapping[str, CommandWords]) -> str:
    if shell == "bash":
        return _bash(commands)
    if shell == "zsh":
        return _zsh(commands)
    if shell == "fish":
        return _fish(commands)
    raise ValueError(f"no completion for {shell!r}; the shells are {', '.join(SHELLS)}")


def _all_words(words: CommandWords) -> str:
    return " ".join((*words.words, *words.flags, *words.valued, "--help"))


def _bash(commands: Mapping[str, CommandWords]) -> str:
    cases = "\n".join(
        f'        {name}) words="{_all_words(words)}" ;;' for name, words in commands.items()
    )
    valued = "|".join(sorted({o for w in commands.values() for o in w.valued} - set(ID_OPTIONS)))
    return f"""\
# seri completion for bash. Load it with:  eval "$(seri completion bash)"  (in ~/.bashrc)
# Session ids are matched here and offered quoted, never given to compgen -W, which would
# expand a $(...) or a backtick in one.
_seri_ids() {{
    local id quoted
    COMPREPLY=()
    while IFS= read -r id; do
        if [[ "$id" == "$cur"* ]]; then
            printf -v quoted '%q' "$id"
            COMPREPLY+=("$quoted")
        fi
    done < <({IDS_COMMAND})
}}
_seri_complete() {{
    local cur prev cmd words
    cur="${{COMP_WORDS[COMP_CWORD]}}"
    prev="${{COMP_WORDS[COMP_CWORD-1]}}"
    cmd="${{COMP_WORDS[1]}}"
    if [ "$COMP_CWORD" -eq 1 ]; then
        COMPREPLY=($(compgen -W "{" ".join(commands)} --help --version" -- "$cur"))
        return
    fi
    case "$prev" in
        {"|".join(ID_OPTIONS)})
            _seri_ids
            return ;;
        {valued or "--no-such-option"})
            COMPREPLY=()
            return ;;
    esac
    if [ "$cmd" = sessions ] && [ "$prev" = show ]; then
        _seri_ids
        return
    fi
    case "$cmd" in
{cases}
        *) words="" ;;
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -o default -F _seri_complete seri
"""


def _zsh(commands: Mapping[str, CommandWords]) -> str:
    cases = "\n".join(
        f"        {name}) candidates=({_all_words(words)}) ;;" for name, words in commands.items()
    )
    valued = "|".join(sorted({o for w in commands.values() for o in w.valued} - set(ID_OPTIONS)))
    return f"""\
#compdef seri
# seri completion for zsh. Load it with:  eval "$(seri completion zsh)"  (in ~/.zshrc,
# after compinit), or save it as _seri in a directory on $fpath.
_seri() {{
    local cmd=${{words[2]}} prev=${{words[CURRENT-1]}}
    local -a candidates
    if (( CURRENT == 2 )); then
        compadd -- {" ".join(commands)} --help --version
        return
    fi
    case $prev in
        {"|".join(ID_OPTIONS)})
            compadd -- ${{(f)"$({IDS_COMMAND})"}}
            return ;;
        {valued or "--no-such-option"})
            _files
            return ;;
    esac
    if [[ $cmd == sessions && $prev == show ]]; then
        compadd -- ${{(f)"$({IDS_COMMAND})"}}
        return
    fi
    case $cmd in
{cases}
    esac
    compadd -- $candidates
}}
compdef _seri seri
"""


def _fish(commands: Mapping[str, CommandWords]) -> str:
    names = " ".join(commands)
    lines = [
        "# seri completion for fish. Save it with:",
        "#   seri completion fish > ~/.config/fish/completions/seri.fish",
        "complete -c seri -f",
        f'complete -c seri -n "not __fish_seen_subcommand_from {names}" -a "{names}"',
        'complete -c seri -n "__fish_use_subcommand" -l help -d "show help"',
        'complete -c seri -n "__fish_use_subcommand" -l version -d "show the version"',
    ]
    ids = f'"({IDS_COMMAND.replace(" 2>/dev/null", "")})"'
    for name, words in commands.items():
        when = f'-n "__fish_seen_subcommand_from {name}"'
        if words.words:
            listed = " ".join(words.words)
            # The words only until one of them is given (`sessions show` wants an id next).
            first = (
                f'-n "__fish_seen_subcommand_from {name};'
                f' and not __fish_seen_subcommand_from {listed}"'
            )
            lines.append(f'complete -c seri {first} -a "{listed}"')
        lines += [
            f"complete -c seri {when} {_fish_option(flag)}" for flag in (*words.flags, "--help")
        ]
        for option in words.valued:
            values = f"-x -a {ids}" if option in ID_OPTIONS else "-r"
            lines.append(f"complete -c seri {when} {_fish_option(option)} {values}")
    lines.append(f'complete -c seri -n "__fish_seen_subcommand_from show" -x -a {ids}')
    return "\n".join(lines) + "\n"


def _fish_option(option: str) -> str:
    return f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
