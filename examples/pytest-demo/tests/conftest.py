import os

from hypothesis import settings

# Reproducible runs: same inputs (and the same distinct-input counts in the
# observability output) on every machine. HYPOTHESIS_PROFILE overrides.
settings.register_profile(
    "demo",
    max_examples=50,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "demo"))
