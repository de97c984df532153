"""Selecting attributes by name or dotted path (documents `fields`, search `attributesToRetrieve`)."""

from __future__ import annotations

from common.documents.projection import select_attributes

DOC = {"id": 1, "doggo": {"name": "Rex", "age": 3}, "cast": [{"name": "A", "role": "x"}, "plain"], "t": "z"}


def test_names_select_whole_values_in_document_order() -> None:
    assert select_attributes(DOC, ["t", "id"]) == {"id": 1, "t": "z"}
    assert list(select_attributes(DOC, ["t", "id"])) == ["id", "t"]
    assert select_attributes(DOC, ["doggo"]) == {"doggo": {"name": "Rex", "age": 3}}


def test_dotted_paths_select_inside_objects_and_arrays_of_objects() -> None:
    assert select_attributes(DOC, ["doggo.name"]) == {"doggo": {"name": "Rex"}}
    assert select_attributes(DOC, ["cast.name"]) == {"cast": [{"name": "A"}]}
    assert select_attributes(DOC, ["doggo.missing", "nothing"]) == {}
