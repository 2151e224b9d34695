"""Where each selecting option of pytest's ini ``addopts`` is written: the config file and
the option's own line, so a diagnostic quotes the option that deselected or hid a test
(``--deselect tests/t.py::test_x`` on line 58), not the key's first line. An ini value
may go on over indented lines, and a ``pyproject.toml`` list over several lines."""

import re
import shlex
from typing import Any, Dict, List, Optional, Tuple

#: The options of ``addopts`` that leave tests out of a run; each takes a value.
SELECTING = ("--deselect", "-k", "-m", "--ignore", "--ignore-glob")

_TOML_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'([^\']*)\'')


def key_line(lines: List[str]) -> Optional[int]:
    """The index of the line that sets ``addopts``."""
    return next((i for i, text in enumerate(lines) if re.match(r"\s*addopts\s*[=:]", text)), None)


def value_lines(lines: List[str], first: int, toml: bool) -> List[Tuple[int, str]]:
    """The value's text line by line, from the key's line: ``(index, text)``."""
    head = re.split(r"[=:]", lines[first], maxsplit=1)[1]
    found = [(first, head)]
    if toml:
        # A list may span lines up to its closing bracket; a string is one line.
        if head.strip().startswith("[") and "]" not in head:
            for i in range(first + 1, len(lines)):
                found.append((i, lines[i]))
                if "]" in lines[i]:
                    break
        return found
    # INI: a value goes on over the indented lines after it.
    for i in range(first + 1, len(lines)):
        if not lines[i].strip() or not lines[i][0].isspace():
            break
        found.append((i, lines[i]))
    return found


def tokens(found: List[Tuple[int, str]], toml: bool) -> List[Tuple[int, str]]:
    """The arguments pytest reads from the value, each with its line index."""
    out: List[Tuple[int, str]] = []
    for i, text in found:
        if toml:
            strings = [a if a else b for a, b in _TOML_STRING.findall(text)]
            listed = "[" in found[0][1]
            for string in strings:
                # A list's items are one argument each; a string is split as a shell would.
                words = [string] if listed else _split(string)
                out.extend((i, word) for word in words)
        else:
            out.extend((i, word) for word in _split(text))
    return out


def _split(text: str) -> List[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def selecting(args: List[Tuple[int, str]]) -> List[Tuple[int, str, str]]:
    """The selecting options among the arguments: ``(line index, flag, value)``."""
    out = []
    for n, (i, word) in enumerate(args):
        flag, _, value = word.partition("=")
        if flag in SELECTING and value:
            out.append((i, flag, value))
        elif word in SELECTING and n + 1 < len(args):
            out.append((i, word, args[n + 1][1]))
    return out


def options_at(text: str, file: str) -> List[Dict[str, Any]]:
    """Each selecting option of the ``addopts`` in a config file's text, at its own line
    (1-based): ``{"option", "flag", "value", "file", "line"}``."""
    lines = text.splitlines()
    first = key_line(lines)
    if first is None:
        return []
    toml = file.endswith(".toml")
    found = value_lines(lines, first, toml)
    return [
        {
            "option": f"{flag} {shlex.quote(value)}",
            "flag": flag,
            "value": value,
            "file": file,
            "line": i + 1,
        }
        for i, flag, value in selecting(tokens(found, toml))
    ]
