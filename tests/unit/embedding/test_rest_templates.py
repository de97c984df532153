"""REST ``request``/``response`` templates: the reference's checks and messages (each message below was
read from the reference engine's answer to the same template), rendering, and reading answers."""

from __future__ import annotations

from typing import Any

import pytest

from common.rest_templates import RestTemplateError, parse_rest_templates

PREFIX = "Error while generating embeddings: user error: "
NOTE = (
    "\n  - Note: this template is using a document template, and so expects to contain the placeholder "
    '"{{text}}" rather than "{{fragment}}"'
)
BATCH_RESPONSE = {"d": [{"v": "{{embedding}}"}, "{{..}}"]}


@pytest.mark.parametrize(
    ("request_template", "response_template", "message"),
    [
        ({"input": "x"}, {"e": "{{embedding}}"}, 'in `request`: "{{text}}" not found' + NOTE),
        ({"input": "prefix {{text}}"}, {"e": "{{embedding}}"}, 'in `request`: "{{text}}" not found' + NOTE),
        (
            {"input": ["{{text}}", "{{text}}"]}, {"e": "{{embedding}}"},
            'in `request.input[1]`: Found "{{text}}", but it was already present in '
            '`request.input[0]`' + NOTE,
        ),
        (
            {"input": ["{{text}}", "a", "{{..}}"]}, {"e": "{{embedding}}"},
            'in `request.input`: "{{..}}" expected at position #1, but found at position #2' + NOTE,
        ),
        (
            {"a": ["{{..}}", "{{text}}"]}, BATCH_RESPONSE,
            'in `request.a`: "{{..}}" expected at position #1, but found at position #0' + NOTE,
        ),
        (
            {"input": "{{..}}", "t": "{{text}}"}, {"e": "{{embedding}}"},
            'in `request.input`: "{{..}}" appears outside of an array' + NOTE,
        ),
        (
            {"a": [["{{text}}", "{{..}}"], "{{..}}"]}, BATCH_RESPONSE,
            'in `request.a`: "{{..}}" appears nested inside of a value that is itself repeated' + NOTE,
        ),
        (
            {"a": [1, "{{..}}"], "b": "{{text}}"}, {"d": "{{embedding}}"},
            'in `request.a[0]`: Expected "{{text}}" inside of the repeated value' + NOTE,
        ),
        (
            {"a": ["{{text}}", "{{..}}"], "b": [1, "{{..}}"]}, BATCH_RESPONSE,
            'in `request.b`: Found "{{..}}", but it was already present in `request.a`' + NOTE,
        ),
        (
            {"b": [1, "{{..}}"], "a": ["{{text}}", "{{..}}"]}, BATCH_RESPONSE,
            'in `request.b[0]`: Expected "{{text}}" inside of the repeated value' + NOTE,
        ),
        ({"input": ["{{text}}", "{{..}}"]}, {"e": "x"}, 'in `response`: "{{embedding}}" not found'),
        (
            {"input": ["{{text}}", "{{..}}"]}, {"e": ["{{embedding}}", "{{embedding}}"]},
            'in `response.e[1]`: Found "{{embedding}}", but it was already present in `response.e[0]`',
        ),
        (
            {"a": ["{{text}}", "{{..}}"]}, {"d": [{"v": "{{embedding}}", "w": "{{embedding}}"}, "{{..}}"]},
            'in `response.d.w`: Found "{{embedding}}", but it was already present in `response.d.v`',
        ),
        (
            {"input": ["{{text}}", "{{..}}"]}, {"e": ["{{embedding}}", "{{..}}"], "f": "{{..}}"},
            'in `response.f`: "{{..}}" appears outside of an array',
        ),
        (
            {"a": ["{{text}}", "{{..}}"]}, {**BATCH_RESPONSE, "z": {"q": ["{{..}}"]}},
            'in `response.z.q`: "{{..}}" expected at position #1, but found at position #0',
        ),
        (
            {"input": ["{{text}}", "{{..}}"]}, {"e": "{{embedding}}"},
            "in `response`: `response` has a single embedding, but `request` has multiple texts to embed",
        ),
        (
            {"input": "{{text}}"}, {"e": ["{{embedding}}", "{{..}}"]},
            "in `response`: `response` has multiple embeddings, but `request` has only one text to embed",
        ),
    ],
)  # fmt: skip
def test_refused_templates(request_template: Any, response_template: Any, message: str) -> None:
    with pytest.raises(RestTemplateError) as raised:
        parse_rest_templates(request_template, response_template)
    assert raised.value.message == PREFIX + message


def test_extra_elements_after_the_repeat_marker_are_accepted_and_dropped() -> None:
    templates = parse_rest_templates(
        {"input": ["{{text}}", "{{..}}", "a"]}, {"e": ["{{embedding}}", "{{..}}"]}
    )
    assert templates.render(["x", "y"]) == {"input": ["x", "y"]}


def test_single_text_template() -> None:
    templates = parse_rest_templates(
        {"model": "m", "input": {"text": "{{text}}", "n": [1, "{{embedding}}"]}},
        {"out": [0, {"v": "{{embedding}}"}]},
    )
    assert not templates.batched
    assert templates.render(["hello"]) == {
        "model": "m",
        "input": {"text": "hello", "n": [1, "{{embedding}}"]},
    }
    assert templates.embeddings({"out": [7, {"v": [1.0, 2.0]}], "other": 1}) == [[1.0, 2.0]]


def test_batched_template_repeats_the_first_element() -> None:
    request = {"model": "m", "inputs": [{"kind": "text", "value": "{{text}}"}, "{{..}}"]}
    templates = parse_rest_templates(request, {"results": [{"vector": "{{embedding}}"}, "{{..}}"]})
    assert templates.batched
    assert templates.render(["a", "b"]) == {
        "model": "m",
        "inputs": [{"kind": "text", "value": "a"}, {"kind": "text", "value": "b"}],
    }
    assert request["inputs"][0] == {"kind": "text", "value": "{{text}}"}  # the template is not changed
    answer = {"results": [{"vector": [1.0]}, {"vector": [2.0]}]}
    assert templates.embeddings(answer) == [[1.0], [2.0]]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ({"result": []}, "in `response`: missing field `results`"),
        ({"results": {"vector": [1]}}, "in `response.results`: expected an array, got an object"),
        ({"results": [{"vec": [1]}]}, "in `response.results`: missing field `vector`"),
        ([1], "in `response`: expected an object, got an array of 1 elements"),
    ],
)
def test_answers_that_do_not_match_the_response_template(answer: Any, message: str) -> None:
    templates = parse_rest_templates(
        {"t": ["{{text}}", "{{..}}"]}, {"results": [{"vector": "{{embedding}}"}, "{{..}}"]}
    )
    with pytest.raises(ValueError) as raised:
        templates.embeddings(answer)
    assert str(raised.value) == message
