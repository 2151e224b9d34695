"""The plugin's one question to the binary: which skips the ledger derives at this commit.

Every decision it can leave to the binary stays there (the one parser of the ledger):
the skip set, the ledger's digest, the commit and whether the checkout is dirty all come
from ``freezegate skips --format plugin``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, Dict

import pytest


def find_binary() -> str:
    """`$FREEZEGATE`, else the `freezegate` of this environment, else `PATH`."""
    explicit = os.environ.get("FREEZEGATE")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise pytest.UsageError(f"freezegate: $FREEZEGATE={explicit} is not an executable file")
        return explicit
    name = "freezegate.exe" if os.name == "nt" else "freezegate"
    for scripts in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(scripts, name)
        if scripts and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("freezegate")
    if found:
        return found
    raise pytest.UsageError(
        "freezegate: no freezegate executable: set $FREEZEGATE, install freezegate into this "
        f"environment ({sysconfig.get_path('scripts')}), or put it on PATH"
    )


def ask_binary(invocation_dir: Path) -> Dict[str, Any]:
    """The skips the ledger derives at this commit, with the ledger's digest and the
    commit, from the binary (the same config discovery as `freezegate check`)."""
    binary = find_binary()
    try:
        done = subprocess.run(
            [binary, "skips", "--format", "plugin"],
            cwd=str(invocation_dir),
            capture_output=True,
            encoding="utf-8",  # the binary's output, not the locale's (cp1252 on Windows)
            check=False,
        )
    except OSError as error:
        raise pytest.UsageError(f"freezegate: could not run {binary}: {error}") from error
    if done.returncode != 0:
        raise pytest.UsageError(
            f"freezegate: `{binary} skips` failed (exit {done.returncode}); no test ran:\n{done.stderr.strip()}"
        )
    try:
        answer = json.loads(done.stdout)
        skips = answer["skips"]
    except (ValueError, KeyError, TypeError) as error:
        raise pytest.UsageError(
            f"freezegate: `{binary} skips --format plugin` printed no skip set ({error}): "
            "is it the freezegate of this plugin's release?"
        ) from error
    if not isinstance(skips, list):
        raise pytest.UsageError("freezegate: the binary's skip set is not a list")
    return answer
