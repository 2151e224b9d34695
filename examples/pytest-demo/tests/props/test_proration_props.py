"""Property tests for billing.proration (the compensating properties).

The Hypothesis settings profile (derandomized, 50 examples, no database) is
registered in tests/conftest.py so runs are reproducible.
"""

from hypothesis import given
from hypothesis import strategies as st

from billing.proration import prorate

amounts = st.integers(min_value=1, max_value=10_000_000)  # a charge of at least a cent
periods = st.integers(min_value=1, max_value=366)


@st.composite
def usage(draw):
    """A period length and two usage counts d1 <= d2 within it."""
    period = draw(periods)
    d1 = draw(st.integers(min_value=0, max_value=period))
    d2 = draw(st.integers(min_value=d1, max_value=period))
    return period, d1, d2


@given(amount=amounts, usage=usage())
def test_monotonic_in_period(amount, usage):
    """Using more of the period never lowers the charge, and the whole
    period costs exactly the full amount."""
    period, d1, d2 = usage
    assert prorate(amount, d1, period) <= prorate(amount, d2, period)
    assert prorate(amount, period, period) == amount
