"""The outbound guard's address rules (``common/outbound.py``); the refusals of real webhook deliveries
are in ``tests/integration/test_outbound_guard.py``."""

from __future__ import annotations

import asyncio
import ipaddress

import pytest

from common.outbound import AllowedNetworks, OutboundRefused, is_public, parse_ip_networks, resolve_allowed


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "10.0.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
        "224.0.0.1", "255.255.255.255", "192.0.2.1", "::1", "::", "fe80::1", "fd12::1", "ff02::1",
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
        "2001:0:4136:e378:8000:63bf:f5ff:fffe",  # Teredo: its client address is private
        "2001:db8::1",
    ],
)  # fmt: skip
def test_non_public_addresses(address: str) -> None:
    assert not is_public(ipaddress.ip_address(address))
    assert not AllowedNetworks().allows(ipaddress.ip_address(address))
    assert AllowedNetworks(everything=True).allows(ipaddress.ip_address(address))


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]
)
def test_public_addresses(address: str) -> None:
    assert is_public(ipaddress.ip_address(address))


def test_allowed_networks_cover_mapped_forms() -> None:
    allowed = AllowedNetworks.from_option("127.0.0.0/8,fd00::/8")
    assert allowed.allows(ipaddress.ip_address("127.0.0.5"))
    assert allowed.allows(ipaddress.ip_address("::ffff:127.0.0.5"))
    assert allowed.allows(ipaddress.ip_address("fd00::7"))
    assert not allowed.allows(ipaddress.ip_address("10.0.0.1"))
    assert not allowed.allows(ipaddress.ip_address("::1"))
    assert AllowedNetworks.from_option("any").everything
    assert AllowedNetworks.from_option(None) == AllowedNetworks()


def test_option_format() -> None:
    assert parse_ip_networks("any") is None
    assert parse_ip_networks("127.0.0.1,::1/128") == (
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("::1/128"),
    )
    for bad in ("", "ANY", "10.0.0.0/8, 10.1.0.0/16", "10.0.0.1/8", "localhost"):
        with pytest.raises(ValueError):
            parse_ip_networks(bad)


def test_a_name_is_refused_when_any_of_its_addresses_is() -> None:
    with pytest.raises(OutboundRefused, match="`localhost` resolves to"):
        asyncio.run(resolve_allowed("localhost", 80, AllowedNetworks()))
    loopback = AllowedNetworks.from_option("127.0.0.0/8,::1/128")
    assert asyncio.run(resolve_allowed("localhost", 80, loopback)).is_loopback
    assert asyncio.run(resolve_allowed("8.8.4.4", 80, AllowedNetworks())) == ipaddress.ip_address("8.8.4.4")
