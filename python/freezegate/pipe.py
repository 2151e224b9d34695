"""The supervised run's pipe: under ``freezegate run``, the record goes to the binary
over a pipe it handed to pytest, never through a file another process could replace.

The binary starts pytest with ``FREEZEGATE_RUN_FD`` (the write end of a pipe, inherited)
and ``FREEZEGATE_RUN_TOKEN`` (once-only). The plugin takes both out of the environment
at once, so nothing the tests start inherits them, and sends one line per message:
``hello`` (the token, where the record belongs), ``test`` rows as each test finishes (so a run
that dies midway leaves a partial record for inspection), and ``record``, the whole
record, at the end of the session."""

from __future__ import annotations

import json
import os
import sys
from typing import IO, Any, Dict, Optional

FD_VARIABLE = "FREEZEGATE_RUN_FD"
TOKEN_VARIABLE = "FREEZEGATE_RUN_TOKEN"
PATH0_VARIABLE = "FREEZEGATE_RUN_PATH0"


def restore_import_path() -> None:
    """``freezegate run`` starts Python with ``PYTHONSAFEPATH=1``, so that a ``pytest.py``
    in the working directory is not imported as pytest. Once pytest, pluggy and this
    plugin are imported (pytest loads plugins before any conftest), the directory
    ``python -m`` would have put first goes back, for the project's own imports, and the
    variable is unset for the processes the tests start. Where the tools came from is in
    the record (FZ608)."""
    first = os.environ.pop(PATH0_VARIABLE, None)
    if first is None:
        return
    os.environ.pop("PYTHONSAFEPATH", None)
    if first and first not in sys.path:
        sys.path.insert(0, first)


class Pipe:
    def __init__(self, stream: IO[str], token: str) -> None:
        self._stream = stream
        self._token = token

    @classmethod
    def from_environment(cls) -> Optional["Pipe"]:
        """The pipe of a supervised run, or None outside one. Takes both variables out of
        the environment, and keeps the descriptor from processes the tests start."""
        fd_text = os.environ.pop(FD_VARIABLE, None)
        token = os.environ.pop(TOKEN_VARIABLE, None)
        if fd_text is None:
            return None
        import pytest

        try:
            fd = int(fd_text)
            os.set_inheritable(fd, False)
            stream = os.fdopen(fd, "w", encoding="utf-8", buffering=1 << 16)
        except (ValueError, OSError) as error:
            raise pytest.UsageError(
                f"freezegate: ${FD_VARIABLE}={fd_text} is not the pipe of a `freezegate run`: {error}"
            ) from error
        if not token:
            raise pytest.UsageError(f"freezegate: ${FD_VARIABLE} is set without ${TOKEN_VARIABLE}")
        return cls(stream, token)

    def _send(self, kind: str, payload: str) -> None:
        self._stream.write(f"{kind} {payload}\n")

    def hello(self, record_path: str, answer: Dict[str, Any]) -> None:
        header = {
            "token": self._token,
            "record": record_path,
            "pid": os.getpid(),
            "commit": answer.get("commit"),
            "dirty": bool(answer.get("dirty")),
            "ledger": answer.get("ledger"),
            "ledger_sha256": answer.get("ledger_sha256"),
        }
        self._send("hello", json.dumps(header, separators=(",", ":")))
        self._stream.flush()

    def row(self, node_id: str, entry: Dict[str, Any]) -> None:
        """A finished test's row, sent at once: a run killed by the next test still
        leaves it in the partial record (one write of a few dozen bytes a test)."""
        self._send("test", json.dumps([node_id, entry], separators=(",", ":")))
        self._stream.flush()

    def record(self, text: str) -> None:
        """The whole record (one line of JSON), then the pipe closes: the run is over."""
        self._send("record", text)
        self._stream.flush()
        self._stream.close()

    def close_without_record(self, why: str) -> None:
        """The session ends with no record to send (a collection, not a run)."""
        self._send("norecord", json.dumps({"why": why}))
        self._stream.flush()
        self._stream.close()
