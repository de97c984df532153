"""Documents the reference engine matches (or does not) where Sift once differed
(``python -m bench.run differential``), on small crafted indexes of a real two-shard cluster. Each
expectation was measured on the reference with the same documents and query."""

from __future__ import annotations

from tests.integration.search_support import found, make_index
from tests.support.cluster import RunningCluster


def t(*texts: str) -> list[dict[str, object]]:
    return [{"id": n, "t": text} for n, text in enumerate(texts, start=1)]


def test_letters_without_decomposition_are_not_folded(cluster: RunningCluster) -> None:
    # ø, ł and þ stay letters of their own: `lod` is no prefix of `łodz`, `ors` none of `ørsta`, and
    # `aero` (four letters, no typo allowed) is not `aerø`. æ is spelled `ae` as the reference does.
    docs = t("Łódź", "Lodi", "Ørsta", "Orsay", "Ærø", "Þorlákshöfn", "Torla")
    make_index(cluster, "unfolded", docs)
    assert found(cluster, "unfolded", "lod") == [2]
    assert found(cluster, "unfolded", "lodz") == []
    assert found(cluster, "unfolded", "łódź") == [1]
    assert found(cluster, "unfolded", "ors") == [4]
    assert found(cluster, "unfolded", "ørsta") == [3]
    assert found(cluster, "unfolded", "aero") == []
    assert found(cluster, "unfolded", "ærø") == [5]
    assert found(cluster, "unfolded", "tor") == [7]
    assert found(cluster, "unfolded", "þor") == [6]


def test_marks_shared_with_thai_stay_inside_latin_words(cluster: RunningCluster) -> None:
    # U+0331 and U+0303 are Latin and Thai marks: `H̱allamish` is one word, so `al` does not match it.
    make_index(cluster, "marks", t("H\u0331allamish", "Allamanda", "Kha\u0304\u0303dba\u0304ri"))
    assert found(cluster, "marks", "al") == [2]
    assert found(cluster, "marks", "hallamish") == [1]
    assert found(cluster, "marks", "d") == []
    assert found(cluster, "marks", "khadbari") == [3]


def test_short_words_split_in_two(cluster: RunningCluster) -> None:
    # Any word of two letters or more may stand for two adjacent words: `ca` for `C.A.`, `its` for
    # `it's` (after the word itself), `yo` for the `Y-O` of `B-E-Y-O-N-D`.
    docs = t("C.A. Rosetti", "it's here", "its", "B-E-Y-O-N-D", "Cambridge")
    make_index(cluster, "short-splits", docs)
    assert found(cluster, "short-splits", "ca ") == [1]
    assert found(cluster, "short-splits", "its") == [3, 2]
    assert found(cluster, "short-splits", "yo") == [4]


def test_a_word_splits_where_its_halves_are_most_often_adjacent(cluster: RunningCluster) -> None:
    # `ab` and `out` are more frequent than `abo` and `ut` on both shards (ids 3 and 6 are on different
    # ones), but never adjacent: `about` is `abo ut`.
    docs = t("ab x out", "ab y out", "abo ut", "out ab", "ab z out", "abo ut", "about", "out x ab")
    make_index(cluster, "adjacent-splits", docs)
    assert found(cluster, "adjacent-splits", "about") == [7, 3, 6]
