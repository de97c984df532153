"""``_formatted`` and ``_matchesPosition`` over whole documents (search.md §1.6)."""

from __future__ import annotations

import pytest

from shard.analysis import AnalysisConfig, Analyzer, Token
from shard.highlight import NO_MATCH, FormatOptions, HitFormatter, WordTable
from tests.unit.highlight.conftest import Format

MOVIE = {"id": 852, "title": "Carol", "rating": 7.5, "adult": False, "poster": None, "genres": ["Drama"]}
CAROL = WordTable({"carol": (0, 5)})


def test_nothing_requested_gives_neither(fmt: Format) -> None:
    assert fmt(MOVIE, CAROL) == (None, None)


def test_formatted_shows_every_retrieved_field_with_numbers_as_strings(fmt: Format) -> None:
    formatted, positions = fmt(MOVIE, CAROL, attributes_to_highlight=["title"])
    assert formatted == {
        "id": "852",
        "title": "<em>Carol</em>",
        "rating": "7.5",
        "adult": False,
        "poster": None,
        "genres": ["Drama"],
    }
    assert positions is None


def test_numbers_everywhere_become_json_text(fmt: Format) -> None:
    document = {"n": [1, -2.5, 0.1, True, None, {"x": 3, "y": [4.0]}]}
    formatted, _ = fmt(document, NO_MATCH, attributes_to_highlight=["n"])
    assert formatted == {"n": ["1", "-2.5", "0.1", True, None, {"x": "3", "y": ["4.0"]}]}


def test_numbers_can_be_highlighted(fmt: Format) -> None:
    formatted, positions = fmt(
        MOVIE, WordTable({"852": (0, 3)}), attributes_to_highlight=["id"], show_matches_position=True
    )
    assert formatted is not None
    assert formatted["id"] == "<em>852</em>"
    assert positions == {"id": [{"start": 0, "length": 3}]}


def test_formatted_adds_requested_fields_to_the_retrieved_ones_in_document_order(fmt: Format) -> None:
    document = {"title": "Carol", "overview": "Carol meets Therese", "id": 1}
    formatted, _ = fmt(document, CAROL, attributes_to_retrieve=["id"], attributes_to_crop=["overview:2"])
    assert formatted == {"overview": "Carol meets…", "id": "1"}


def test_star_formats_every_displayed_field_even_if_not_retrieved(fmt: Format) -> None:
    formatted, _ = fmt(MOVIE, CAROL, attributes_to_retrieve=["id"], attributes_to_highlight=["*"])
    assert formatted is not None
    assert list(formatted) == list(MOVIE)
    assert formatted["title"] == "<em>Carol</em>"


def test_attributes_not_displayed_are_ignored(fmt: Format) -> None:
    hidden = {"displayed_attributes": ["title"], "attributes_to_highlight": ["overview"]}
    assert fmt({"title": "Carol"}, CAROL, **hidden) == (None, None)
    formatted, _ = fmt(
        {"title": "Carol"},
        CAROL,
        displayed_attributes=["title"],
        attributes_to_highlight=["overview", "title"],
    )
    assert formatted == {"title": "<em>Carol</em>"}


def test_a_displayed_attribute_missing_from_the_document_still_asks_for_formatted(fmt: Format) -> None:
    formatted, _ = fmt({"title": "Carol"}, CAROL, attributes_to_highlight=["overview"])
    assert formatted == {"title": "Carol"}


def test_a_parent_of_a_displayed_nested_field_is_valid(fmt: Format) -> None:
    document = {"doggo": {"name": "Carol"}}
    formatted, _ = fmt(
        document, CAROL, displayed_attributes=["doggo.name"], attributes_to_highlight=["doggo"]
    )
    assert formatted == {"doggo": {"name": "<em>Carol</em>"}}


def test_nested_and_array_paths_select_leaves(fmt: Format) -> None:
    document = {"doggos": [{"name": "Carol", "bio": "Carol"}, {"name": "Rex carol"}], "title": "Carol"}
    formatted, _ = fmt(document, CAROL, attributes_to_retrieve=[], attributes_to_highlight=["doggos.name"])
    assert formatted == {"doggos": [{"name": "<em>Carol</em>"}, {"name": "Rex <em>carol</em>"}]}


def test_rules_merge_from_parent_and_child_paths(fmt: Format) -> None:
    document = {"doggo": {"name": "Carol the good dog", "bio": "Carol is a very good dog"}}
    formatted, _ = fmt(
        document, CAROL, attributes_to_highlight=["doggo"], attributes_to_crop=["doggo.name:2"]
    )
    assert formatted == {"doggo": {"name": "<em>Carol</em> the…", "bio": "<em>Carol</em> is a very good dog"}}


def test_a_child_rule_applies_to_a_leaf_in_its_place(fmt: Format) -> None:
    formatted, _ = fmt({"doggo": "Carol"}, CAROL, attributes_to_highlight=["doggo.name"])
    assert formatted == {"doggo": "<em>Carol</em>"}


def test_matches_position_covers_all_displayed_leaves_with_array_indices(fmt: Format) -> None:
    document = {
        "title": "Carol",
        "cast": [{"name": "Cate"}, {"name": "Carol Aird"}],
        "tags": [["x", "carol"], "carol carol"],
        "id": 1,
    }
    formatted, positions = fmt(document, CAROL, attributes_to_retrieve=["id"], show_matches_position=True)
    assert formatted is None
    assert positions == {
        "cast.name": [{"start": 0, "length": 5, "indices": [1]}],
        "tags": [
            {"start": 0, "length": 5, "indices": [0, 1]},
            {"start": 0, "length": 5, "indices": [1]},
            {"start": 6, "length": 5, "indices": [1]},
        ],
        "title": [{"start": 0, "length": 5}],
    }


def test_matches_position_counts_utf8_bytes(fmt: Format) -> None:
    matcher = WordTable({"brulee": (0, 6), "creme": (1, 5)})
    _, positions = fmt({"t": "Café crème brûlée"}, matcher, show_matches_position=True)
    assert positions == {"t": [{"start": 6, "length": 6}, {"start": 13, "length": 8}]}


def test_matches_position_of_a_prefix_is_the_prefix(fmt: Format) -> None:
    matcher = WordTable(prefixes=[("lov", 0)])
    _, positions = fmt({"t": "Élan lovely"}, matcher, show_matches_position=True)
    assert positions == {"t": [{"start": 6, "length": 3}]}


def test_matches_position_is_empty_without_matches(fmt: Format) -> None:
    assert fmt(MOVIE, NO_MATCH, show_matches_position=True) == (None, {})


def test_options_from_a_search_body() -> None:
    params = {
        "q": "carol",
        "attributesToHighlight": ["title"],
        "attributesToCrop": None,
        "cropLength": 5,
        "cropMarker": "",
        "highlightPreTag": "[",
        "showMatchesPosition": True,
        "attributesToRetrieve": ["id"],
    }
    assert FormatOptions.from_search(params, ["id", "title"]) == FormatOptions(
        attributes_to_highlight=["title"],
        crop_length=5,
        crop_marker="",
        highlight_pre_tag="[",
        show_matches_position=True,
        attributes_to_retrieve=["id"],
        displayed_attributes=["id", "title"],
    )
    assert FormatOptions.from_search({}, None) == FormatOptions()


def test_each_text_is_tokenised_once_per_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    analyzer = Analyzer(AnalysisConfig())
    calls: list[str] = []
    tokens = analyzer.tokens

    def counting(text: str, locales: tuple[str, ...] = ()) -> list[Token]:
        calls.append(text)
        return tokens(text, locales)

    monkeypatch.setattr(analyzer, "tokens", counting)
    options = FormatOptions(
        attributes_to_highlight=["*"], attributes_to_crop=["title"], show_matches_position=True
    )
    HitFormatter(options, CAROL, analyzer).format({"title": "Carol", "id": 1})
    assert calls == ["Carol"]  # cropped, so tokenised; "1" holds no match and is ruled out before


def test_placeholder_search_highlights_without_tokenising(monkeypatch: pytest.MonkeyPatch) -> None:
    analyzer = Analyzer(AnalysisConfig())
    monkeypatch.setattr(analyzer, "tokens", None)
    options = FormatOptions(attributes_to_highlight=["*"], show_matches_position=True)
    assert HitFormatter(options, NO_MATCH, analyzer).format(MOVIE)[1] == {}


STOP_WORDS = Analyzer(AnalysisConfig.from_settings({"stopWords": ["the", "of"]}))


@pytest.mark.parametrize(
    ("matcher", "expected"),
    [
        # Texts without a match are shown as they are, found so by the fast indexing path...
        (WordTable({"carol": (0, 5)}), ["<em>Carol</em> of the sea", "Therese of the lake"]),
        # ...which skips stop words: a query matching one must still see them highlighted.
        (WordTable({"the": (0, 3)}), ["Carol of <em>the</em> sea", "Therese of <em>the</em> lake"]),
        # A phrase (a split word) matches where none of its words matches alone.
        (WordTable(phrases=[(0, ("the", "lake"))]), ["Carol of the sea", "Therese of <em>the lake</em>"]),
        (WordTable(phrases=[(0, ("therese", "of"))]), ["Carol of the sea", "<em>Therese of</em> the lake"]),
    ],
)
def test_texts_without_matches_skip_tokenising_but_not_stop_words_or_phrases(
    matcher: WordTable, expected: list[str]
) -> None:
    document = {"names": ["Carol of the sea", "Therese of the lake"]}
    options = FormatOptions(attributes_to_highlight=["names"])
    formatted, _ = HitFormatter(options, matcher, STOP_WORDS).format(document)
    assert formatted == {"names": expected}
