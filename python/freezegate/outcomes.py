"""What a test's reports say: its outcome (the worst phase), and where a skip or xfail
came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Optional, Set

import pytest

# What an outcome is worse than: a test counts once, at its worst phase.
RANK = {"passed": 0, "xpassed": 1, "xfailed": 2, "skipped": 3, "failed": 4, "error": 5}


def covered_by(node_id: str, frozen: Set[str]) -> bool:
    """A frozen id covers itself, its parametrized cases and, for a class, its tests."""
    if node_id in frozen:
        return True
    head = node_id.split("[", 1)[0]
    if head != node_id and head in frozen:
        return True
    parts = head.split("::")
    return any("::".join(parts[:end]) in frozen for end in range(2, len(parts)))


def outcome_of(report: pytest.TestReport) -> Optional[str]:
    """What one phase's report says of the test (None: nothing yet, a teardown passed)."""
    wasxfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            return "xpassed" if wasxfail else "passed"
        if report.skipped:
            return "xfailed" if wasxfail else "skipped"
        return "failed"
    if report.failed:
        return "error"
    if report.skipped:
        return "xfailed" if wasxfail else "skipped"
    return "passed" if report.when == "setup" else None


def reason(text: str) -> str:
    return text[len("Skipped: "):] if text.startswith("Skipped: ") else text


def skip_detail(
    report: pytest.TestReport, outcome: str, frozen: Set[str], relative: Callable[[str], str]
) -> Dict[str, Any]:
    """Where a skip or xfail came from (the ledger, a marker, a call) and its location."""
    keywords = report.keywords
    scope = None
    # Decided from the skip set itself: under xdist the controller marked nothing.
    if outcome == "skipped" and covered_by(report.nodeid, frozen):
        source = "ledger"
    elif outcome in ("xfailed", "xpassed"):
        source = "mark" if "xfail" in keywords else "imperative"
    elif report.when == "setup" and ("skip" in keywords or "skipif" in keywords):
        source = "mark"
    elif "__unittest_skip__" in keywords:
        source = "mark"
    else:
        source = "imperative"
        if report.when == "setup":
            # A fixture called pytest.skip(): pytest reports the test's location.
            scope = "fixture"
    detail: Dict[str, Any] = {"source": source}
    if scope:
        detail["scope"] = scope
    if isinstance(report.longrepr, tuple):
        path, line, text = report.longrepr
        detail.update(reason=reason(text), file=relative(path), line=line)
    else:
        # pytest.xfail() raises where it is called: its crash entry is that line
        # (pytest hides its own frames), where report.location is the test's def.
        crash = getattr(report.longrepr, "reprcrash", None)
        if source == "imperative" and crash is not None and crash.lineno:
            detail.update(file=relative(crash.path), line=crash.lineno)
        else:
            file, line, _ = report.location
            detail.update(file=file, line=(line + 1) if line is not None else None)
        wasxfail = getattr(report, "wasxfail", None)
        if wasxfail:
            detail["reason"] = wasxfail
    # Where the test ran, the plugin found the line that set it (see places.py).
    place = getattr(report, "freezegate_place", None)
    if isinstance(place, dict) and source != "ledger":
        detail.update(file=place["file"], line=place["line"], scope=place["scope"])
        if place.get("origin"):
            detail["origin"] = place["origin"]
        called = place["scope"] in ("unittest", "fixture")  # a call, not a marker
        detail["source"] = "imperative" if called else "mark"
    return detail


def relative_to(root: Path) -> Callable[[str], str]:
    """A path as the record names it: relative to pytest's rootdir where it is inside."""
    resolved = root.resolve()

    def relative(path: str) -> str:
        try:
            return Path(path).resolve().relative_to(resolved).as_posix()
        except ValueError:
            return Path(path).as_posix()

    return relative
