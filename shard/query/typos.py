"""Typo derivations: words of the vocabulary within one or two typos of a query word.

The vocabulary is never scanned linearly. A lookup walks the sorted keys with one cursor,
driving a Damerau-Levenshtein automaton (optimal string alignment, one DP row band per character):
consecutive keys reuse the states of their common prefix, and when a prefix can no longer lead to a
kept word the walk seeks straight to the smallest string that still can: past every key with that
prefix, past sibling characters the automaton rejects, and down the query characters a live branch
must continue with. A lookup reads about one key per live branch of the automaton over the
vocabulary's prefix tree; the automaton's states and moves do not depend on the query word (only on
where each character occurs in it), so they are computed once per process, not per lookup.

Cost model (search.md §7.3): ``typos(q, w) = osa(q, w) + (1 if q[0] != w[0] else 0)``. The
"different first character costs 2" rule is judged on the result, not on the edit: any edit script
that leaves a different first character (substituting, deleting or inserting at the start, or
transposing the first two characters) costs one extra typo, and an edit at position 0 that keeps the
first character (``hello`` -> ``hhello``) does not. So 1-typo derivations always share the query's
first character, and a 2-typo derivation with another first character is one edit from the query.
For a prefix term, ``typos = min(typos(q, p))`` over the non-empty prefixes ``p`` of the word.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from common.typo_caps import TYPO_LIMITS, Found, LookupKey, may_pass_cap
from shard.index.env import Database, Txn, index_prefix
from shard.query.vocabulary import ID_BYTES, MAX_WORD_CHARS, SUFFIX_BYTES

_NUL = "\x00"
_DEAD = 0
_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)

_Band = tuple[int, ...]


class _Universal:
    """The query-independent automaton for one ``(max_typos, prefix)``, shared by every query.

    A state is the diagonal band of the DP row (distances of the query prefixes of length
    ``depth - k .. depth + k`` to the walked prefix, capped at ``k + 1``: cells off the band always
    exceed ``k``), the transposition candidates the last character opened for the next row, and,
    for a prefix term, the best distance over the walked prefixes. A move depends only on the state
    and on a small key (where the next character occurs in the query around the diagonal, where the
    query starts and ends within the band, and whether this is a first character unlike the
    query's), so the few hundred reachable states and their moves are computed once per process.
    Interning is locked: searches run in threads.
    """

    def __init__(self, max_typos: int, prefix: bool) -> None:
        self.max_typos = max_typos
        self.prefix = prefix
        self.width = 2 * max_typos + 1
        self.cap = cap = max_typos + 1
        self._ids: dict[tuple[_Band, _Band, int], int] = {}
        self.band: list[_Band] = []
        self.best: list[int] = []
        self.bounds: list[int] = []
        """Fewest and most typos of the words below a state, as ``fewest * (cap + 1) + most``."""
        self.moves: list[dict[int, int]] = []
        self._swap: list[_Band] = []
        self._lock = threading.Lock()
        blank = (cap,) * self.width
        self._intern(blank, blank, cap, cap, cap)
        root = tuple(cap if b < max_typos else b - max_typos for b in range(self.width))
        self.root = self._intern(root, blank, cap, 0, max_typos)

    def step(self, state: int, key: int) -> int:
        """The state after a move; ``_DEAD`` when no word below it is within the typos."""
        found = self.moves[state].get(key)
        if found is None:
            with self._lock:
                found = self.moves[state][key] = self._transition(state, key)
        return found

    def _transition(self, state: int, key: int) -> int:
        """One DP row step on the band, cell ``b`` of the new row being query prefix
        ``depth + 1 - k + b``: substitution from old cell ``b``, deletion from old cell ``b + 1``,
        insertion from new cell ``b - 1``, transposition from the cell the last character opened."""
        cap, width, max_typos = self.cap, self.width, self.max_typos
        chars, start, end = key & 0xFF, key >> 8 & 0xF, (key >> 12 & 0xF) - 1
        old, swap = self.band[state], self._swap[state]
        new = [cap] * width
        left = cap
        for b in range(start, min(end, width - 1) + 1):
            value = old[b] + (not chars >> (b + 1) & 1)
            if b + 1 < width and old[b + 1] + 1 < value:
                value = old[b + 1] + 1
            if left + 1 < value:
                value = left + 1
            if chars >> b & 1 and swap[b] < value:
                value = swap[b]
            new[b] = left = min(value, cap)
        opened = [min(old[b] + 1, cap) if chars >> (b + 2) & 1 else cap for b in range(width)]
        if key >> 16 and not chars >> (max_typos + 1) & 1:
            new = [min(value + 1, cap) for value in new]
            opened = [min(value + 1, cap) for value in opened]
        last = new[end] if 0 <= end < width else cap
        if self.prefix:
            best = min(self.best[state], last)
            fewest, most = min(*new, best), best
        else:
            best, fewest, most = cap, min(new), max_typos
        if fewest > max_typos:
            return _DEAD
        known = self._ids.get((tuple(new), tuple(opened), best))
        return self._intern(tuple(new), tuple(opened), best, fewest, most) if known is None else known

    def _intern(self, band: _Band, swap: _Band, best: int, fewest: int, most: int) -> int:
        state = len(self.band)
        self._ids[band, swap, best] = state
        self.band.append(band)
        self._swap.append(swap)
        self.best.append(best)
        self.moves.append({})
        self.bounds.append(fewest * (self.cap + 1) + most)
        return state


@lru_cache(maxsize=256)
def _contexts(max_typos: int, size: int) -> tuple[int, ...]:
    """Per depth, the move key bits that depend on the query's length alone: the band cells that
    are no query prefix (before the empty one, past the whole query) and the first move."""
    width = 2 * max_typos + 1
    contexts = []
    for depth in range(MAX_WORD_CHARS + 1):
        start = min(max(max_typos - depth - 1, 0), width)
        end = min(max(size - depth - 1 + max_typos, -1), width)
        contexts.append(start << 8 | (end + 1) << 12 | (depth == 0) << 16)
    return tuple(contexts)


_UNIVERSAL = {(typos, prefix): _Universal(typos, prefix) for typos in (1, 2) for prefix in (False, True)}


@dataclass(frozen=True, slots=True)
class _Choices:
    """Where the walk may go from one state at one depth."""

    other: int
    """The state any character absent from ``near`` leads to, ``_DEAD`` when that is not live."""
    near: dict[str, int]
    """The query characters close enough to the diagonal to move unlike absent ones (to their move keys)."""
    live: tuple[str, ...]
    """The characters of ``near`` leading to live states, sorted, and those states."""
    states: tuple[int, ...]
    onward: str
    """Where only query characters continue and the state is no kept word, the smallest live one
    (every string between this state and its ``onward`` extension can be skipped); else empty."""


class _Walk:
    """One typo lookup: the query's automaton and the levels still taking words.

    A path's states are kept in a stack, one universal state per character: the depth is the
    index, and with the query's character positions gives each move's key.
    """

    def __init__(self, word: str, max_typos: int, prefix: bool) -> None:
        universal = self.universal = _UNIVERSAL[max_typos, prefix]
        self.word = word
        self.max_typos = max_typos
        masks: dict[str, int] = {}
        for position, char in enumerate(word):
            masks[char] = masks.get(char, 0) | 1 << (position + max_typos + 1)
        window = (1 << (universal.width + 2)) - 1
        self.contexts = contexts = _contexts(max_typos, len(word))
        # Per depth, each query character near the diagonal (in order) to its move key; any other
        # character's move key is the depth's context. Past the query's end every character moves alike.
        self.keys: list[dict[str, int]] = [
            {
                char: (masks[char] >> depth & window) | contexts[depth]
                for char in sorted(set(word[max(depth - max_typos - 1, 0) : depth + max_typos + 2]))
            }
            for depth in range(len(word) + max_typos + 2)
        ]
        self.keys += [{}] * (MAX_WORD_CHARS + 1 - len(self.keys))
        self._choices: dict[int, _Choices] = {}
        self._chains: dict[int, tuple[str, tuple[int, ...]]] = {}
        self._open = tuple(range(1, max_typos + 1))
        self.alive = self._alive_table()

    def close(self, typos: int) -> None:
        """Stop looking for words with this many typos: their cap is reached."""
        self._open = tuple(level for level in self._open if level != typos)
        self.alive = self._alive_table()
        self._choices.clear()
        self._chains.clear()

    @property
    def done(self) -> bool:
        return not self._open

    def typos(self, depth: int, state: int) -> int:
        """Typos of the word ending at this depth and state (above ``max_typos``: no match)."""
        universal = self.universal
        if universal.prefix:
            return universal.best[state]
        cell = len(self.word) - depth + self.max_typos
        return universal.band[state][cell] if 0 <= cell < universal.width else universal.cap

    def next_target(self, path: str, stack: list[int], died: bool) -> tuple[str, str] | None:
        """The smallest string past the walked part of ``path`` that can still lead to a kept word,
        and the part of ``path`` it keeps.

        A fully walked word first tries its own children, otherwise the deepest ancestor with a
        live next sibling character gives the target, followed by its ``onward`` chain so one
        seek jumps as deep as it safely can. ``stack`` is left holding the target's states.
        """
        level = len(stack) - (2 if died else 1)
        after = path[level] if died else _NUL
        while level >= 0:
            choices = self._choices.get(level << 20 | stack[level]) or self._choose(level, stack[level])
            if choices.other == _DEAD:
                at = bisect.bisect_right(choices.live, after)
                char, state = (
                    (choices.live[at], choices.states[at]) if at < len(choices.live) else ("", _DEAD)
                )
            else:
                char, state = _next_other(choices, after)
            if state != _DEAD:
                chain, chained = self._chains.get((level + 1) << 20 | state) or self._chain(level + 1, state)
                del stack[level + 1 :]
                stack.append(state)
                stack += chained
                base = path[:level]
                return base + char + chain, base
            level -= 1
            after = path[level] if level >= 0 else _NUL
        return None

    def _choose(self, depth: int, state: int) -> _Choices:
        """Computed once per state and depth a walk goes through: a handful of moves each."""
        universal, alive, context = self.universal, self.alive, self.contexts[depth]
        bounds, moves = universal.bounds, universal.moves[state]
        other = moves.get(context)
        if other is None:
            other = universal.step(state, context)
        chars, states = [], []
        for char, key in self.keys[depth].items():
            following = moves.get(key)
            if following is None:
                following = universal.step(state, key)
            if alive[bounds[following]]:
                chars.append(char)
                states.append(following)
        other = other if alive[bounds[other]] else _DEAD
        onward = chars[0] if other == _DEAD and chars and self.typos(depth, state) not in self._open else ""
        choices = _Choices(other, self.keys[depth], tuple(chars), tuple(states), onward)
        self._choices[depth << 20 | state] = choices
        return choices

    def _chain(self, depth: int, state: int) -> tuple[str, tuple[int, ...]]:
        """The smallest string leading from this state to a kept word or to a state where any character
        continues (the ``onward`` characters), and the states it leads to.

        A seek to a target extended this way skips only strings that cannot lead to a kept word:
        those branching off the chain with a smaller character, which is dead, and its proper
        prefixes, which are no kept words themselves.
        """
        key, chars, states = depth << 20 | state, [], []
        while (choices := self._choices.get(depth << 20 | state) or self._choose(depth, state)).onward:
            state = choices.states[0]
            chars.append(choices.onward)
            states.append(state)
            depth += 1
        chain = self._chains[key] = ("".join(chars), tuple(states))
        return chain

    def _alive_table(self) -> list[bool]:
        """Per bounds value: whether a level in that range of typos still takes words."""
        values = range(self.universal.cap + 1)
        return [
            any(max(low, 1) <= level <= min(high, self.max_typos) for level in self._open)
            for low in values
            for high in values
        ]


def _next_other(choices: _Choices, after: str) -> tuple[str, int]:
    """The smallest character above ``after`` leading to a live state, and that state
    (``_DEAD`` when there is none), from a state where characters absent from the query are live:
    the next code point the query does not reject."""
    code = ord(after) + 1
    while code <= _MAX_CODE_POINT:
        if code in _SURROGATES:
            code = _SURROGATES.stop
        char = chr(code)
        if char not in choices.near:
            return char, choices.other
        if char in choices.live:
            return char, choices.states[choices.live.index(char)]
        code += 1
    return "", _DEAD


def typo_words(
    txn: Txn, db: Database, index_id: int, word: str, max_typos: int, *, prefix: bool
) -> list[tuple[str, int]]:
    """(vocabulary word, typos) with ``1 <= typos <= max_typos``, in key order, capped per level.

    The exact word (and, for a prefix term, the words starting with it) are left to the caller.
    Caps keep the first words in key order, so a lookup is deterministic; a full level prunes the
    branches that could only add to it.
    """
    if not word or max_typos < 1 or len(word) - max_typos > MAX_WORD_CHARS:
        return []  # no stored word (or prefix of one) is that long
    if max_typos >= len(TYPO_LIMITS):
        raise ValueError(f"at most {len(TYPO_LIMITS) - 1} typos are supported, got {max_typos}")
    walk = _Walk(word, max_typos, prefix)
    universal = walk.universal
    moves, bounds = universal.moves, universal.bounds
    keys, contexts, alive = walk.keys, walk.contexts, walk.alive
    start = index_prefix(index_id)
    cursor = txn.cursor(db)
    counts = [0] * len(TYPO_LIMITS)
    found: list[tuple[str, int]] = []
    stack = [universal.root]
    planned = walk.next_target("", stack, False)
    while planned is not None and cursor.set_range(start + planned[0].encode()):
        key = cursor.key()
        if not key.startswith(start):
            break
        current = key[ID_BYTES:-SUFFIX_BYTES].decode()
        target, base = planned
        if current.startswith(target):
            depth = len(target)
        else:
            # Usually the seek lands past the target but still below the part of the path it kept.
            depth, limit = len(base) if current.startswith(base) else 0, min(len(target), len(current))
            while depth < limit and target[depth] == current[depth]:
                depth += 1
            del stack[depth + 1 :]
        state = stack[depth]
        died = False
        for at in range(depth, len(current)):
            move = keys[at].get(current[at], contexts[at])
            following = moves[state].get(move)
            state = universal.step(state, move) if following is None else following
            stack.append(state)
            if not alive[bounds[state]]:
                died = True
                break
        if not died:
            typos = walk.typos(len(current), state)
            if 1 <= typos <= max_typos and counts[typos] < TYPO_LIMITS[typos]:
                found.append((current, typos))
                counts[typos] += 1
                if counts[typos] == TYPO_LIMITS[typos]:
                    walk.close(typos)
                    alive = walk.alive
                    if walk.done:
                        break
        planned = walk.next_target(current, stack, died)
    return found


@dataclass
class TypoCaps:
    """The caps of a search's typo lookups, index-wide.

    Each shard looks its words up in its own vocabulary, and keeps per typo count the first
    ``TYPO_LIMITS`` words in key order: over N shards, a lookup could keep up to N times more words than
    one shard holding every document, and other ones. When a shard finds more than ``limit / N`` words
    at some count (else the N shards together cannot pass the limit), it names the lookup
    (``flagged``); the gateway then asks every shard for its words of that lookup, keeps the first
    ``limit`` of their union per count, and sends the search again with them (``settled``), which each
    shard uses instead of its own (``gateway/search/typo_caps.py``).
    """

    settled: dict[LookupKey, Found | None] = field(default_factory=dict)
    """The gateway's answers: the index-wide words, or None when the shard's own are right."""
    shards: int = 1
    flagged: dict[LookupKey, None] = field(default_factory=dict)

    @classmethod
    def from_params(cls, params: dict[str, Any], shards: int) -> TypoCaps:
        caps = cls(shards=shards)
        caps.settle(params)
        return caps

    def settle(self, params: dict[str, Any]) -> None:
        """Take the gateway's answers a query carries (``typoWords``: [word, typos, prefix, words])."""
        for word, typos, prefix, found in params.get("typoWords") or ():
            words = None if found is None else tuple((entry[0], entry[1]) for entry in found)
            self.settled[(word, typos, prefix)] = words

    def lookup(self, key: LookupKey, own: Callable[[], Found]) -> Found:
        """The lookup's words: the gateway's when it settled them, else this shard's (``own()``)."""
        words = self.settled.get(key)
        if words is not None:
            return words
        found = own()
        if self.shards > 1 and key not in self.settled and may_pass_cap(found, self.shards):
            self.flagged[key] = None
        return found
