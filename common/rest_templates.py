"""The ``rest`` embedder's ``request`` and ``response`` templates (search.md §6.11): checked once,
then used to build each request and read each answer.

``request`` holds exactly one ``"{{text}}"`` string and ``response`` one ``"{{embedding}}"``; either may
instead sit inside the first element of an array whose second element is ``"{{..}}"`` ("repeat the
first element for each text"), which batches texts. The checks and their messages follow the
reference's (paths such as ``request.input[1]``; inside a repeated value the element's index is not
shown). The gateway checks a settings update with ``parse_rest_templates``; shards build from it.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

TEXT: Final = "{{text}}"
FRAGMENT: Final = "{{fragment}}"
"""What a multimodal embedder's ``request`` holds instead of ``TEXT``."""
EMBEDDING: Final = "{{embedding}}"
REPEAT: Final = "{{..}}"
EMBEDDING_ERROR_PREFIX: Final = "Error while generating embeddings: "
"""How every ``vector_embedding_error`` message starts, then ``user error: `` or ``runtime error: ``."""
_REQUEST_NOTES: Final = {
    TEXT: "\n  - Note: this template is using a document template, and so expects to contain the placeholder "
    '"{{text}}" rather than "{{fragment}}"',
    # "rathern" is the reference's spelling.
    FRAGMENT: "\n  - Note: this template is using fragments, and so expects to contain the placeholder "
    '"{{fragment}}" rathern than "{{text}}"',
}

Step = str | int
"""A key of an object or an index of an array, on the way from a template's root to a placeholder."""


class RestTemplateError(Exception):
    """A template the reference would refuse; ``message`` is the whole ``vector_embedding_error`` text
    (a user error), ``detail`` what follows its ``user error: ``."""

    def __init__(self, detail: str) -> None:
        self.detail = detail
        self.message = f"{EMBEDDING_ERROR_PREFIX}user error: {detail}"
        super().__init__(self.message)


@dataclass(frozen=True)
class _Template:
    value: Any
    placeholder: tuple[Step, ...]
    """Where the placeholder is: from the root, or (batched) from the repeated element."""
    repeat: tuple[Step, ...] | None
    """Where the ``[item, "{{..}}"]`` array is, when the template is batched."""


@dataclass(frozen=True)
class RestTemplates:
    request: _Template
    response: _Template

    @property
    def batched(self) -> bool:
        return self.request.repeat is not None

    def render(self, texts: Sequence[Any]) -> Any:
        """The request body for ``texts`` (one unless batched; rendered fragments are JSON values)."""
        template = self.request
        if template.repeat is None:
            (text,) = texts
            return _replaced(template.value, template.placeholder, text)
        item = _at(template.value, template.repeat)[0]
        return _replaced(
            template.value, template.repeat, [_replaced(item, template.placeholder, t) for t in texts]
        )

    def embeddings(self, answer: Any) -> list[Any]:
        """The embeddings of an answer, in the order of the request's texts. Raises ``ValueError``
        saying where the answer departs from the template."""
        template = self.response
        if template.repeat is None:
            return [_follow(answer, template.placeholder, "response")]
        items = _follow(answer, template.repeat, "response")
        if not isinstance(items, list):
            raise ValueError(
                f"in `{_path('response', template.repeat)}`: expected an array, got {_kind(items)}"
            )
        where = _path("response", template.repeat)
        return [_follow(item, template.placeholder, where) for item in items]


def parse_rest_templates(request: Any, response: Any, placeholder: str = TEXT) -> RestTemplates:
    """Both templates checked, in the reference's order (the request's errors first); ``placeholder``
    is ``FRAGMENT`` for an embedder that uses multimodal fragments."""
    parsed_request = _parse(request, "request", placeholder, _REQUEST_NOTES[placeholder])
    parsed_response = _parse(response, "response", EMBEDDING, "")
    if parsed_request.repeat is not None and parsed_response.repeat is None:
        raise RestTemplateError(
            "in `response`: `response` has a single embedding, but `request` has multiple texts to embed"
        )
    if parsed_request.repeat is None and parsed_response.repeat is not None:
        raise RestTemplateError(
            "in `response`: `response` has multiple embeddings, but `request` has only one text to embed"
        )
    return RestTemplates(parsed_request, parsed_response)


def parse_request_template(request: Any, placeholder: str = TEXT) -> None:
    """The ``request`` template alone checked (a settings update that sends no ``response``)."""
    _parse(request, "request", placeholder, _REQUEST_NOTES[placeholder])


class _Walk:
    """One depth-first walk of a template, remembering where the placeholder and the repeat are."""

    def __init__(self, root: str, placeholder: str, note: str) -> None:
        self.root = root
        self.placeholder_text = placeholder
        self.note = note
        self.placeholder: tuple[Step, ...] | None = None
        self.repeat: tuple[Step, ...] | None = None

    def fail(self, steps: tuple[Step, ...], message: str) -> RestTemplateError:
        return RestTemplateError(f"in `{self.shown(steps)}`: {message}{self.note}")

    def shown(self, steps: tuple[Step, ...]) -> str:
        # Inside the repeated element the element's own index is not shown.
        if (
            self.repeat is not None
            and steps[: len(self.repeat)] == self.repeat
            and len(steps) > len(self.repeat)
        ):
            steps = self.repeat + steps[len(self.repeat) + 1 :]
        return _path(self.root, steps)

    def visit(self, value: Any, steps: tuple[Step, ...], repeated: bool) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                self.visit(item, (*steps, key), repeated)
        elif isinstance(value, list):
            self.visit_array(value, steps, repeated)
        elif value == self.placeholder_text:
            if self.placeholder is not None:
                raise self.fail(
                    steps, f'Found "{value}", but it was already present in `{self.shown(self.placeholder)}`'
                )
            self.placeholder = steps
        elif value == REPEAT:
            raise self.fail(steps, f'"{REPEAT}" appears outside of an array')

    def visit_array(self, values: list[Any], steps: tuple[Step, ...], repeated: bool) -> None:
        position = next((i for i, item in enumerate(values) if item == REPEAT), None)
        if position is None:
            for index, item in enumerate(values):
                self.visit(item, (*steps, index), repeated)
            return
        if position != 1:
            raise self.fail(steps, f'"{REPEAT}" expected at position #1, but found at position #{position}')
        if repeated:
            raise self.fail(steps, f'"{REPEAT}" appears nested inside of a value that is itself repeated')
        if self.repeat is not None:
            raise self.fail(
                steps, f'Found "{REPEAT}", but it was already present in `{self.shown(self.repeat)}`'
            )
        self.repeat = steps
        before = self.placeholder
        self.visit(values[0], (*steps, 0), True)
        if self.placeholder is before:
            raise RestTemplateError(
                f"in `{_path(self.root, (*steps, 0))}`: Expected "
                f'"{self.placeholder_text}" inside of the repeated value{self.note}'
            )


def _parse(value: Any, root: str, placeholder: str, note: str) -> _Template:
    walk = _Walk(root, placeholder, note)
    walk.visit(value, (), False)
    if walk.placeholder is None:
        raise RestTemplateError(f'in `{root}`: "{placeholder}" not found{note}')
    steps = walk.placeholder
    if walk.repeat is not None:
        steps = steps[len(walk.repeat) + 1 :]  # from the repeated element
    return _Template(copy.deepcopy(value), steps, walk.repeat)


def _path(root: str, steps: Sequence[Step]) -> str:
    return root + "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in steps)


def _at(value: Any, steps: Sequence[Step]) -> Any:
    for step in steps:
        value = value[step]
    return value


def _replaced(value: Any, steps: Sequence[Step], replacement: Any) -> Any:
    """A copy of ``value`` with what is at ``steps`` replaced; the rest shared, never mutated."""
    if not steps:
        return replacement
    step, rest = steps[0], steps[1:]
    if isinstance(value, dict):
        return {**value, step: _replaced(value[step], rest, replacement)}
    assert isinstance(step, int)
    return [*value[:step], _replaced(value[step], rest, replacement), *value[step + 1 :]]


def _follow(answer: Any, steps: Sequence[Step], root: str) -> Any:
    for depth, step in enumerate(steps):
        here = _path(root, steps[:depth])
        if isinstance(step, str):
            if not isinstance(answer, dict):
                raise ValueError(f"in `{here}`: expected an object, got {_kind(answer)}")
            if step not in answer:
                raise ValueError(f"in `{here}`: missing field `{step}`")
        elif not isinstance(answer, list) or step >= len(answer):
            raise ValueError(
                f"in `{here}`: expected an array of at least {step + 1} elements, got {_kind(answer)}"
            )
        answer = answer[step]
    return answer


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return f"an array of {len(value)} elements"
    if isinstance(value, dict):
        return "an object"
    return "`null`" if value is None else f"`{value!r}`"[:60]
