"""`seri chat` reads a plainly written command line without docopt (importing docopt was
~7 ms of a `seri chat -p` start whose target is 120 ms): what it reads must be exactly what
docopt reads from the same words, and whatever it does not read plainly is left to docopt."""

from __future__ import annotations

from typing import Any

from docopt import DocoptExit, docopt
from hypothesis import given, settings
from hypothesis import strategies as st

from seri.commands import chat

OPTIONS = [
    "-p",
    "--prompt",
    "--output-format",
    "--resume",
    "--model",
    "--max-turns",
    "--max-budget-usd",
    "--allow",
    "--tag",
    "--continue",
    "--fork",
]
# Spellings docopt reads and the plain reading leaves to it, and words that are no option.
OTHER = ["--mod", "--prompt=hi", "-phi", "--cont", "-h", "--help", "--", "-", "-x", "--verbose"]
VALUES = ["hi", "json", "stream-json", "text", "3", "a=b", "-", "--", "-p", "--fork", "two words"]
WORDS = st.sampled_from(OPTIONS + OTHER + VALUES) | st.text(max_size=6)


def _docopt(words: list[str]) -> dict[str, Any] | None:
    try:
        return dict(docopt(chat.__doc__ or "", ["chat", *words]))
    except (DocoptExit, SystemExit):
        return None


@settings(max_examples=1000)
@given(st.lists(WORDS, max_size=7))
def test_a_plain_command_line_is_read_as_docopt_reads_it(words: list[str]) -> None:
    plain = chat.plain_options(words)
    if plain is None:
        return
    assert _docopt(words) == plain, words


@settings(max_examples=300)
@given(
    prompt=st.text(min_size=1).filter(lambda text: text != "--"),
    output_format=st.sampled_from([None, "text", "json", "stream-json", "yaml"]),
    resume=st.sampled_from([None, "abc123", "--continue"]),
    tags=st.lists(st.sampled_from(["team=a", "run=7", "x"]), max_size=2),
)
def test_what_scripts_write_is_read_plainly(
    prompt: str, output_format: str | None, resume: str | None, tags: list[str]
) -> None:
    words = ["-p", prompt]
    if output_format is not None:
        words += ["--output-format", output_format]
    if resume is not None:
        words = ["--resume", resume, *words]
    for tag in tags:
        words += ["--tag", tag]
    plain = chat.plain_options(words)
    assert plain is not None, words
    assert plain == _docopt(words)


def test_what_it_leaves_to_docopt() -> None:
    for words in (
        ["--continue", "--resume", "x", "-p", "hi"],  # one or the other: docopt says so
        ["-p", "a", "--prompt", "b"],  # given twice
        ["-p"],  # no value
        ["-p", "--"],
        ["--mod", "m", "-p", "hi"],  # an abbreviation
        ["--help"],
        ["--fork", "--fork"],
    ):
        assert chat.plain_options(words) is None, words
