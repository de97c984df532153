"""Human log lines render exceptions as plain tracebacks, whatever is installed beside Sift."""

from __future__ import annotations

import logging
import sys

from common.logging import _formatter


def test_a_traceback_does_not_render_the_frames_locals() -> None:
    """With ``rich`` installed (schemathesis brings it), structlog's default rendered every frame's
    locals: one request body nested 500 deep took the gateway 90 s to log."""
    nested_local: list[object] = []
    for _ in range(50):
        nested_local = [nested_local]
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.LogRecord("sift", logging.ERROR, __file__, 1, "failed", None, sys.exc_info())
    text = _formatter("human", stream=False).format(record)
    assert "ValueError: boom" in text
    assert "nested_local" not in text
