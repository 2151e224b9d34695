"""One plain test and one Hypothesis property: the plugin records both."""

from hypothesis import given, strategies as st


def test_addition() -> None:
    assert 1 + 1 == 2


@given(st.integers())
def test_negation_is_an_involution(n: int) -> None:
    assert -(-n) == n
