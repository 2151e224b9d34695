"""Distinct inputs per Hypothesis property, for this run only, counted in process."""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .outcomes import covered_by


class Samples:
    """Distinct inputs per Hypothesis property for this run only, counted in process by
    what Hypothesis drew (its choice sequence) where it has one, and by the arguments'
    values: the smaller count is the property's, so a strategy that maps every draw to
    one constant (`st.integers().map(lambda _: 3)`) counts 1, as the binary counts an
    observability file.

    Observing a property makes Hypothesis describe every example it runs (a repr of
    each argument): a tenth of a Hypothesis-heavy suite's time. So only the properties
    the binary names (the ledger's compensating properties) are observed, each while it
    runs; every property is when the user turned observability on for files anyway."""

    def __init__(self) -> None:
        # property -> (run_start, keys, what each example passed, counted by choices)
        self.runs: Dict[str, Tuple[float, Set[Any], Set[str], bool]] = {}
        # The properties to observe; None: every one, for the whole session.
        self.only: Optional[Set[str]] = None
        self._observability: Any = None

    def install(self, only: Optional[List[str]]) -> None:
        try:
            from hypothesis.internal import observability
        except ImportError:
            return  # no Hypothesis: no properties to count
        if not hasattr(observability, "remove_observability_callback"):
            return
        observability.OBSERVABILITY_CHOICES = True
        if "HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY" in os.environ or only is None:
            observability.add_observability_callback(self.observe, all_threads=True)
            return
        # Nobody asked for observability files: skip the per-example line coverage
        # Hypothesis would otherwise collect for them.
        observability.OBSERVABILITY_COLLECT_COVERAGE = False
        self.only = set(only)
        self._observability = observability

    def observe_items(self, items: List[Any]) -> None:
        """Observes each property to count while it runs: its `runtest` is wrapped, so no
        other test pays a hook for it (a test of a file without such a property is not
        even looked at)."""
        if self.only is None:
            return
        files = {node_id.partition("::")[0] for node_id in self.only}
        for item in items:
            if item.nodeid.partition("::")[0] in files and covered_by(item.nodeid, self.only):
                item.runtest = self._observed(item.runtest)

    def _observed(self, runtest: Callable[[], None]) -> Callable[[], None]:
        def observed() -> None:
            self._observability.add_observability_callback(self.observe, all_threads=True)
            try:
                runtest()
            finally:
                self._observability.remove_observability_callback(self.observe)

        return observed

    def observe(self, observation: Any, thread_id: int = 0) -> None:
        if getattr(observation, "type", None) != "test_case":
            return
        if getattr(observation, "status", None) not in ("passed", "failed"):
            return
        prop = observation.property
        start = float(getattr(observation, "run_start", 0.0) or 0.0)
        nodes = getattr(getattr(observation, "metadata", None), "choice_nodes", None)
        # What it passed, as Hypothesis shows it (else its arguments): as the binary
        # reads an observability row.
        arguments = json.dumps(getattr(observation, "arguments", None), sort_keys=True, default=repr)
        shown = getattr(observation, "representation", None)
        value = shown if isinstance(shown, str) else arguments
        if getattr(observation, "how_generated", None) == "explicit example":
            # An @example draws nothing (no choices): it is told apart by what it passed.
            key: Any = ("explicit example", shown or repr(observation.arguments))
            nodes = ()
        elif nodes is not None:
            key = tuple((node.type, repr(node.value)) for node in nodes)
        else:
            key = arguments
        current = self.runs.get(prop)
        if current is None or start > current[0]:
            current = (start, set(), set(), nodes is not None)
            self.runs[prop] = current
        elif start < current[0]:
            return  # an earlier run of a property run twice: only the latest counts
        current[1].add(key)
        current[2].add(value)
        if nodes is None and current[3]:
            self.runs[prop] = (current[0], current[1], current[2], False)

    def to_json(self) -> Dict[str, Any]:
        counts: Dict[str, Any] = {}
        for prop, (_, keys, values, choices) in self.runs.items():
            if len(values) < len(keys):
                counts[prop] = {"distinct": len(values), "method": "arguments"}
            else:
                counts[prop] = {"distinct": len(keys), "method": "choice sequences" if choices else "arguments"}
        return counts


def max_samples(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    """Two processes' counts: a property runs in one process, so this keeps each one's
    own count (the larger, should a property ever run twice)."""
    merged = dict(a)
    for prop, count in b.items():
        if prop not in merged or count["distinct"] > merged[prop]["distinct"]:
            merged[prop] = count
    return merged
