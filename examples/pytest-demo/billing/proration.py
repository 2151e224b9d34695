"""Proration of a subscription charge over a billing period.

All amounts are integer cents; rounding is half-up to the nearest cent.
"""

from __future__ import annotations


def prorate(amount_cents: int, days_used: int, days_in_period: int) -> int:
    """Charge for ``days_used`` days of a ``days_in_period``-day period.

    >>> prorate(3000, 10, 30)
    1000
    """
    if days_in_period <= 0:
        raise ValueError(f"days_in_period must be positive, got {days_in_period}")
    if not 0 <= days_used <= days_in_period:
        raise ValueError(f"days_used must be in 0..={days_in_period}, got {days_used}")
    if amount_cents < 0:
        raise ValueError(f"amount_cents must be non-negative, got {amount_cents}")
    # round half up: floor(amount * used / period + 1/2), in integers
    return (2 * amount_cents * days_used + days_in_period) // (2 * days_in_period)


def format_cents(cents: int) -> str:
    """Render integer cents as a dollar string: ``-1234`` -> ``"-$12.34"``."""
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{frac:02d}"
