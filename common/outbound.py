"""Outbound HTTP from the cluster to user-given URLs (webhooks, embedders, the reranker), behind one guard.

A user-given URL must not become a way into the host's own network (server-side request forgery): a
target is resolved once, every address it resolves to must be public or inside a network that
``--experimental-allowed-ip-networks`` allows (``any`` allows all), and the request is sent to the
checked address, with the URL's host kept as ``Host`` header, TLS server name and certificate name,
so a second DNS answer cannot send it elsewhere. Redirects are never followed and proxy variables of
the environment are ignored (a proxy would resolve the name again).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

ANY = "any"
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_MAX_ANSWER_BYTES = 64 * 1024
# httpx logs every request at info: a line per notification, and 4% of a busy scheduler's time.
# The callers log what matters (a webhook's uuid, never its URL, which may hold a secret).
logging.getLogger("httpx").setLevel(logging.WARNING)


class OutboundRefused(Exception):
    """The target is not allowed (its address, scheme or URL); retrying cannot change that."""


def parse_ip_networks(text: str) -> tuple[IPNetwork, ...] | None:
    """The option's value: ``any`` (None: everything allowed) or comma-separated networks such as
    ``10.0.0.0/8,::1/128`` (a bare address is a one-address network). Raises ValueError, as the
    reference refuses them, on spaces, an empty item or host bits set (``10.0.0.1/8``)."""
    if text == ANY:
        return None
    networks = []
    for item in text.split(","):
        try:
            networks.append(ipaddress.ip_network(item, strict=True))
        except ValueError as error:
            if "host bits set" in str(error):
                raise ValueError(f"`{item}`: the host part of the address is not zero") from None
            raise ValueError(
                f"`{item}` is not an IP address or network (expected e.g. `10.0.0.0/8`)"
            ) from None
    return tuple(networks)


def _embedded_ipv4(address: IPAddress) -> tuple[ipaddress.IPv4Address | None, bool]:
    """The IPv4 address an IPv6 one stands for (mapped ``::ffff:a.b.c.d``, NAT64, 6to4, Teredo), and
    whether it stands for that address alone (mapped, NAT64) rather than routing through it."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None, False
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped, True
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF), True
    if address.sixtofour is not None:
        return address.sixtofour, False
    if address.teredo is not None:
        return address.teredo[1], False
    return None, False


def is_public(address: IPAddress) -> bool:
    """Reachable on the public internet: not loopback, private, link-local, shared, documentation,
    multicast, reserved or unspecified, nor an IPv6 form of such an IPv4 address."""
    embedded, alone = _embedded_ipv4(address)
    if embedded is not None and (alone or not is_public(embedded)):
        return is_public(embedded)
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_unspecified or address.is_loopback
    )


@dataclass(frozen=True)
class AllowedNetworks:
    """What ``--experimental-allowed-ip-networks`` lets outbound requests reach besides public addresses."""

    networks: tuple[IPNetwork, ...] = ()
    everything: bool = False

    @classmethod
    def from_option(cls, text: str | None) -> AllowedNetworks:
        if text is None:
            return cls()
        networks = parse_ip_networks(text)
        return cls(everything=True) if networks is None else cls(networks)

    def allows(self, address: IPAddress) -> bool:
        if self.everything:
            return True
        candidates = [address]
        embedded, _ = _embedded_ipv4(address)
        if embedded is not None:
            candidates.append(embedded)
        if any(candidate in network for candidate in candidates for network in self.networks):
            return True
        return is_public(address)


async def resolve_allowed(host: str, port: int, allowed: AllowedNetworks) -> IPAddress:
    """The address to connect to: ``host`` resolved once, refused if any of its addresses is not
    allowed (a name answering both a public and a private address could otherwise pick either)."""
    addresses = _literal(host)
    if addresses is None:
        try:
            loop = asyncio.get_running_loop()
            addresses = _addresses(await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as error:
            raise httpx.ConnectError(f"cannot resolve `{host}`: {error}") from error
    return _checked(host, addresses, allowed)


def resolve_allowed_sync(host: str, port: int, allowed: AllowedNetworks) -> IPAddress:
    """``resolve_allowed`` for callers outside an event loop (embedders run in worker threads)."""
    addresses = _literal(host)
    if addresses is None:
        try:
            addresses = _addresses(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except OSError as error:
            raise httpx.ConnectError(f"cannot resolve `{host}`: {error}") from error
    return _checked(host, addresses, allowed)


def _literal(host: str) -> list[IPAddress] | None:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        return None


def _addresses(infos: Sequence[tuple[Any, ...]]) -> list[IPAddress]:
    return list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos))


def _checked(host: str, addresses: Sequence[IPAddress], allowed: AllowedNetworks) -> IPAddress:
    for address in addresses:
        if not allowed.allows(address):
            raise OutboundRefused(
                f"`{host}` resolves to {address}, which is not a public address; allow its network "
                "with `--experimental-allowed-ip-networks`"
            )
    return addresses[0]


def _target(url: str) -> tuple[httpx.URL, str, int]:
    """The URL to call, its host and port; refused unless it is an http(s) URL with a host."""
    try:
        target = httpx.URL(url.strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f "))
    except httpx.InvalidURL as error:
        raise OutboundRefused(f"`{url}` is not a URL this server can call: {error}") from None
    if target.scheme not in ("http", "https") or not target.raw_host:
        raise OutboundRefused(f"`{url}` is not an `http://` or `https://` URL with a host")
    return target, target.raw_host.decode("ascii"), target.port or (443 if target.scheme == "https" else 80)


def _pinned(
    client: httpx.Client | httpx.AsyncClient,
    target: httpx.URL,
    host: str,
    address: IPAddress,
    content: bytes,
    headers: list[tuple[bytes, bytes]],
) -> httpx.Request:
    """A POST to the checked ``address``, the URL's host kept for ``Host``, SNI and the certificate."""
    extensions = {"sni_hostname": host} if target.scheme == "https" else {}
    return client.build_request(
        "POST",
        target.copy_with(host=str(address)),
        content=content,
        headers=[(b"Host", target.netloc.rpartition(b"@")[2]), *headers],
        extensions=extensions,
    )


def _client_options(timeout: float, max_connections: int) -> dict[str, Any]:
    """Never follow a redirect (its target is not checked), never use the environment's proxies."""
    return {
        "timeout": timeout,
        "follow_redirects": False,
        "trust_env": False,
        "limits": httpx.Limits(max_connections=max_connections),
    }


class OutboundClient:
    """POSTs to user-given URLs through the guard; one connection pool for the process."""

    def __init__(self, allowed: AllowedNetworks, timeout: float, max_connections: int) -> None:
        self.allowed = allowed
        self.timeout = timeout
        self._client = httpx.AsyncClient(**_client_options(timeout, max_connections))

    async def post(self, url: str, content: bytes, headers: list[tuple[bytes, bytes]]) -> int:
        """The response status (the body is not kept). Raises ``OutboundRefused``, ``httpx.HTTPError``
        (connection problems) or ``TimeoutError`` (the whole exchange took longer than the timeout)."""
        status, _ = await self._exchange(url, content, headers, keep=0)
        return status

    async def ask(
        self, url: str, content: bytes, headers: list[tuple[bytes, bytes]], max_answer_bytes: int
    ) -> tuple[int, bytes]:
        """The response's status and body; raises as :meth:`post` does, and ``OutboundRefused`` for an
        answer larger than ``max_answer_bytes``."""
        return await self._exchange(url, content, headers, keep=max_answer_bytes)

    async def _exchange(
        self, url: str, content: bytes, headers: list[tuple[bytes, bytes]], keep: int
    ) -> tuple[int, bytes]:
        """``keep``: how much of the body to return; 0 reads a short answer and drops it."""
        target, host, port = _target(url)
        async with asyncio.timeout(self.timeout):
            address = await resolve_allowed(host, port, self.allowed)
            request = _pinned(self._client, target, host, address, content, headers)
            response = await self._client.send(request, stream=True)
            body = bytearray()
            try:
                # A short answer is read to its end, so that the connection goes back to the pool
                # (an unread one is closed: each request would then connect again, twice the cost).
                async for chunk in response.aiter_bytes() if keep else response.aiter_raw():
                    body += chunk
                    if len(body) > (keep or _MAX_ANSWER_BYTES):
                        if keep:
                            raise OutboundRefused(f"its answer is larger than {keep} bytes")
                        break
            finally:
                await response.aclose()
        return response.status_code, bytes(body) if keep else b""

    async def close(self) -> None:
        await self._client.aclose()


class SyncOutboundClient:
    """``OutboundClient`` for threads that wait for the answer (embedders): POSTs through the guard and
    returns the whole response, its body read up to ``max_answer_bytes``."""

    def __init__(
        self, allowed: AllowedNetworks, timeout: float, max_connections: int, max_answer_bytes: int
    ) -> None:
        self.allowed = allowed
        self.max_answer_bytes = max_answer_bytes
        self._client = httpx.Client(**_client_options(timeout, max_connections))

    def post(self, url: str, content: bytes, headers: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
        """The response's status and body. Raises ``OutboundRefused`` (the target, or an answer larger
        than ``max_answer_bytes``) or ``httpx.HTTPError`` (connection problems, timeouts)."""
        target, host, port = _target(url)
        address = resolve_allowed_sync(host, port, self.allowed)
        request = _pinned(self._client, target, host, address, content, headers)
        response = self._client.send(request, stream=True)
        try:
            body = bytearray()
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > self.max_answer_bytes:
                    raise OutboundRefused(f"its answer is larger than {self.max_answer_bytes} bytes")
        finally:
            response.close()
        return response.status_code, bytes(body)

    def close(self) -> None:
        self._client.close()
