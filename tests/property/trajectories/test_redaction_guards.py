"""The redactor skips a pattern only where that pattern could not have matched.

``Redactor.text`` runs each pattern only when the text holds a literal the pattern needs (so
that 50 MB of a command's output is not scanned five times over); the oracle here runs every
pattern unconditionally, as the redactor did before, and the two must agree on any text,
including ones built from the literals, their case variants and the characters that re's
IGNORECASE matches to ASCII letters (the Turkish I's, the Kelvin sign, the long s).
"""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from seri.pure.trajectories import redaction
from seri.pure.trajectories.redaction import REDACTED, Redactor


def unguarded(redactor: Redactor, text: str) -> str:
    """Every pattern, whatever the text holds: the redaction the guards must not change."""
    for secret in redactor.secrets:
        text = text.replace(secret, REDACTED)
    text = redaction._SECRET_ASSIGNMENT.sub(lambda m: m[1] + m[2] + REDACTED + m[2], text)
    text = redaction._SECRET_SHAPES.sub(REDACTED, text)
    text = redaction._URL_PASSWORD.sub(lambda m: m[1] + REDACTED + m[3], text)
    text = redaction._NETRC_PASSWORD.sub(redaction._netrc_value, text)
    return redaction._CONFIG_PASSWORD.sub(redaction._config_value, text)


PIECES = (
    "sk-",
    "sk-or-v1-",
    "sk-ant-",
    "sk-proj-",
    "ghp_",
    "gho_",
    "xoxb-",
    "AKIA",
    "Bearer ",
    "BEARER\t",
    "bEaReR ",
    "Authorization: ",
    "AUTHORIZATION=",
    "authorİzation: ",
    "authorızation: ",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "https://user:",
    "@host",
    "://",
    "API_KEY=",
    "export TOKEN='",
    "password ",
    "password: ",
    "secret = ",
    "machine h login u ",
    "\n",
    " ",
    "=",
    "İ",
    "ı",
    "K",
    "ſ",
    "x" * 12,
    "0123456789abcdef" * 2,
    "ABCDEFGHIJKLMNOP",
)
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=12)), max_size=14).map("".join)


# One text each guard must let through (each is redacted): a guard that skips one fails.
EACH_GUARD = (
    "API_KEY=abcdefgh",
    "sk-or-v1-" + "ab" * 16,
    "ghp_" + "a" * 24,
    "xoxb-0123456789",
    "AKIA" + "ABCDEFGHIJKLMNOP",
    "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----",
    "bEaReR abcdefghijk",
    "AUTHORIZATION: abcdefghij",
    "authorİzation: abcdefghij",
    "authorızation: abcdefghij",
    "https://user:hunter22@host",
    "machine h login u password hunter22",
    "db_password: hunter22",
)


# 200 examples, not the ci profile's 500: EACH_GUARD below pins every guard deterministically.
@settings(max_examples=200)
@given(texts, st.lists(st.text(min_size=8, max_size=20), max_size=2))
@example("a line of text to fill fifty megabytes, again\n" * 3, [])
def test_the_guards_change_no_redaction(text: str, secrets: list[str]) -> None:
    redactor = Redactor.of(secrets)
    assert redactor.text(text) == unguarded(redactor, text)


def test_each_guard_lets_its_pattern_run() -> None:
    for text in EACH_GUARD:
        assert REDACTED in unguarded(Redactor(), text), text  # the oracle redacts it
        assert Redactor().text(text) == unguarded(Redactor(), text), text


def test_a_text_without_the_literals_is_left_as_it_is() -> None:
    """The case the guards are for: plain output with none of the patterns' literals."""
    plain = "a line of text to fill fifty megabytes, again\n" * 1000
    assert Redactor().text(plain) == plain
    assert not redaction._may_hold_a_shape(plain)
