"""Log target filters (``common/log_filter.py``): the reference's directive syntax over Sift's loggers."""

from __future__ import annotations

import logging

import pytest

from common.log_filter import OFF, TRACE, InvalidTarget, LogFilter


def test_a_bare_level_is_the_default_and_targets_take_the_longest_match() -> None:
    target = LogFilter.parse("warn,shard=debug,shard::query=trace,scheduler.executor=off")
    assert target.threshold("gateway.app") == logging.WARNING
    assert target.threshold("shard.server") == logging.DEBUG
    assert target.threshold("shard.query.search") == TRACE
    assert target.threshold("scheduler.executor") == OFF
    assert target.threshold("scheduler.process") == logging.WARNING
    assert target.lowest == TRACE


def test_without_a_default_only_named_targets_pass() -> None:
    target = LogFilter.parse("scheduler=INFO")
    assert target.passes("scheduler.executor", logging.INFO)
    assert not target.passes("scheduler.executor", logging.DEBUG)
    assert not target.passes("shard.server", logging.ERROR)


def test_bare_targets_numbers_and_empty_directives() -> None:
    target = LogFilter.parse("gateway,,3")
    assert target.threshold("gateway.app") == TRACE  # a bare target: every level
    assert target.threshold("shard.server") == logging.INFO  # 3 is info
    assert LogFilter.parse("[span]=info").threshold("shard.server") == OFF  # spans match nothing here


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "Empty string is not a valid target."),
        ("a=b=c", "invalid filter directive: too many '=' in filter directive, expected 0 or 1"),
        ("foo=blah", "error parsing level filter: expected one of"),
        ("foo=9", "error parsing level filter: expected one of"),
    ],
)
def test_invalid_filters_give_the_reference_reason(text: str, reason: str) -> None:
    with pytest.raises(InvalidTarget) as raised:
        LogFilter.parse(text)
    assert str(raised.value).startswith(reason)
