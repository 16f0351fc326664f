"""`seri sessions` reads its command line without docopt when the line is plainly a listing
(docopt, with the re and typing it imports, was a tenth of its start-up): what it reads
must be what docopt reads, and anything else must be left to docopt."""

from __future__ import annotations

from docopt import DocoptExit, docopt
from hypothesis import given, settings
from hypothesis import strategies as st

from seri.commands import main as main_command
from seri.commands import sessions

WORDS = st.sampled_from(
    [
        "list",
        "--json",
        "--all",
        "--limit",
        "--limit=3",
        "--limit=",
        "3",
        "-1",
        "--js",
        "--lim",
        "--limit=x",
        "show",
        "search",
        "rm",
        "abc",
        "-h",
        "--help",
        "--",
        "--fts",
        "--yes",
    ]
)
READ = ("show", "import", "search", "export", "rename", "rm", "--json", "--all", "--limit")


def _docopt(words: list[str]) -> dict[str, object] | None:
    try:
        return docopt(sessions.__doc__ or "", ["sessions", *words])
    except (DocoptExit, SystemExit):
        return None


@settings(max_examples=1000)
@given(st.lists(WORDS, max_size=5))
def test_a_listing_is_read_as_docopt_reads_it(words: list[str]) -> None:
    quick = sessions.listing_options(words)
    if quick is None:
        return
    expected = _docopt(words)
    assert expected is not None, words
    assert {key: expected[key] for key in READ} == {key: quick[key] for key in READ}


def test_the_plain_forms_are_read_without_docopt() -> None:
    for words in ([], ["list"], ["--json"], ["list", "--all", "--limit", "5"], ["--limit=2"]):
        assert sessions.listing_options(words) is not None, words


COMMAND_WORDS = st.sampled_from(["-p", "hi", "--help", "-h", "--version", "--", "x", "list"])


@settings(max_examples=300)
@given(st.sampled_from(sorted(main_command.COMMANDS)), st.lists(COMMAND_WORDS, max_size=4))
def test_a_command_name_first_is_read_as_docopt_reads_it(name: str, rest: list[str]) -> None:
    args = [name, *rest]
    expected = docopt(main_command.__doc__, args, options_first=True)
    assert main_command.command_words(args) == (expected["<command>"], expected["<args>"])
