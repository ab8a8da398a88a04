"""Hypothesis strategies shared by the tests."""

from __future__ import annotations

from hypothesis import strategies as st


def any_text(max_size: int) -> st.SearchStrategy[str]:
    """Any Python string, lone surrogates included and frequent: `st.text()` almost never makes
    them (0–4 of 500 examples), so the characters are drawn one by one and joined."""
    character = st.one_of(st.characters(), st.characters(categories=["Cs"]))
    return st.lists(character, max_size=max_size).map("".join)
