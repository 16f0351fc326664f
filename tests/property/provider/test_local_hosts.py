"""The invariants of ``seri.pure.provider.local_hosts``: which names are this machine (a proxy is
never used for them; a model server there is a local one)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.provider.local_hosts import is_loopback, normal_host

OCTETS = st.integers(0, 255)
LABELS = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
HOSTS = st.one_of(
    st.builds(lambda *o: ".".join(map(str, o)), OCTETS, OCTETS, OCTETS, OCTETS),
    st.lists(LABELS, min_size=1, max_size=4).map(".".join),
    st.sampled_from(["localhost", "::1", "[::1]", "LOCALHOST.", "fe80::1", "::"]),
)


def _spellings(host: str) -> list[str]:
    """Ways a person or a URL writes the same host."""
    return [host.upper(), f" {host} ", f"[{host}]", f"{host}."]


@given(OCTETS, OCTETS, OCTETS)
def test_every_127_address_is_loopback(b: int, c: int, d: int) -> None:
    assert is_loopback(f"127.{b}.{c}.{d}")


@given(OCTETS.filter(lambda a: a != 127), OCTETS, OCTETS, OCTETS)
def test_no_other_ipv4_address_is(a: int, b: int, c: int, d: int) -> None:
    assert not is_loopback(f"{a}.{b}.{c}.{d}")


@given(st.lists(LABELS, min_size=1, max_size=3).map(".".join))
def test_localhost_and_its_subdomains_are_and_lookalikes_are_not(name: str) -> None:
    assert is_loopback(f"{name}.localhost")
    assert not is_loopback(f"localhost.{name}")
    assert not is_loopback(f"{name}localhost") or f"{name}localhost" == "localhost"


@given(HOSTS)
def test_the_answer_does_not_depend_on_how_the_host_is_written(host: str) -> None:
    for spelling in _spellings(host):
        assert normal_host(spelling) == normal_host(host)
        assert is_loopback(spelling) == is_loopback(host)


@given(HOSTS)
def test_normal_host_is_idempotent(host: str) -> None:
    once = normal_host(host)
    assert normal_host(once) == once
