"""Apply the freezegate ledger's skips at collection time: the fallback without the plugin.

Prefer freezegate's pytest plugin (in the wheel: `pytest --freezegate`): it applies the
same skips, works under pytest-xdist, and writes one run record tied to its commit
(`gate/run.json`, for `freezegate check --run`). This hook stays for projects that
cannot install the wheel into their test environment; it does not work under xdist
(the controller collects nothing, so `gate/skipped.json` stays empty). When the plugin
is enabled, or turned off for a run (``FREEZEGATE_PLUGIN_OFF=1``: ``freezegate prove``
runs the frozen test with its freeze lifted), this hook steps aside.

The skip set comes from ``freezegate skips --format json`` (run in this
directory; binary from ``$FREEZEGATE``, else ``freezegate`` on PATH), or, when
``$FREEZEGATE_SKIPS_FILE`` is set, from that file (a JSON array of pytest node
ids; a relative path is taken from the current directory).

Exactly the collected items whose node id is in that set are marked skipped,
and the ids actually applied are written, sorted, to ``gate/skipped.json`` so
the gate can check them (``--applied-skips gate/skipped.json``). If the skip
set cannot be obtained the session stops with a usage error: a run must never
silently skip nothing.

Under ``--collect-only`` nothing runs, so the ledger is not consulted and
``gate/skipped.json`` is left alone (this also keeps ``freezegate check
--collect`` from recursing into ``freezegate skips``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SKIPPED_JSON = HERE / "gate" / "skipped.json"
SKIP_REASON = "frozen by freezegate ledger"


def _frozen_ids() -> list[str]:
    skips_file = os.environ.get("FREEZEGATE_SKIPS_FILE")
    if skips_file:
        origin = f"FREEZEGATE_SKIPS_FILE={skips_file}"
        try:
            text = Path(skips_file).read_text(encoding="utf-8")
        except OSError as e:
            raise pytest.UsageError(f"freezegate: cannot read {origin}: {e}") from e
    else:
        exe = os.environ.get("FREEZEGATE") or shutil.which("freezegate")
        if not exe:
            raise pytest.UsageError(
                "freezegate: binary not found. Set FREEZEGATE=/path/to/freezegate, "
                "put freezegate on PATH, or set FREEZEGATE_SKIPS_FILE to a JSON "
                "array of node ids."
            )
        cmd = [exe, "skips", "--format", "json"]
        origin = f"`{' '.join(cmd)}` (in {HERE})"
        try:
            proc = subprocess.run(
                cmd, cwd=HERE, capture_output=True, text=True, timeout=120
            )
        except (OSError, subprocess.SubprocessError) as e:
            raise pytest.UsageError(f"freezegate: could not run {origin}: {e}") from e
        if proc.returncode != 0:
            raise pytest.UsageError(
                f"freezegate: {origin} exited with {proc.returncode}:\n"
                f"{proc.stderr.strip()}"
            )
        text = proc.stdout
    try:
        ids = json.loads(text)
    except json.JSONDecodeError as e:
        raise pytest.UsageError(f"freezegate: {origin} is not JSON: {e}") from e
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise pytest.UsageError(
            f"freezegate: {origin} must be a JSON array of node-id strings"
        )
    return ids


def pytest_collection_modifyitems(session, config, items):
    if config.option.collectonly or config.pluginmanager.has_plugin("freezegate-session"):
        return
    if os.environ.get("FREEZEGATE_PLUGIN_OFF"):
        return  # the ledger's skips lifted on purpose (`freezegate prove`, `check --collect`)
    frozen = set(_frozen_ids())
    skip = pytest.mark.skip(reason=SKIP_REASON)
    applied = set()
    for item in items:
        if item.nodeid in frozen:
            item.add_marker(skip)
            applied.add(item.nodeid)
    if hasattr(config, "workerinput"):
        return  # pytest-xdist worker: the controller writes the file
    SKIPPED_JSON.parent.mkdir(parents=True, exist_ok=True)
    SKIPPED_JSON.write_text(json.dumps(sorted(applied), indent=2) + "\n", encoding="utf-8")
