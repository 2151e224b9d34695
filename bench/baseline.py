#!/usr/bin/env python3
"""The four default checks written plainly in Python: the bar for the "2.5x faster than
Python" target. Prints the number of violations per rule code as JSON.

    python3 bench/baseline.py DIR TODAY
"""
import datetime
import json
import re
import sys

REQUIRED = ["test_id", "reason", "owner", "opened", "expires", "invariant", "compensating_property"]
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def blank(v):
    return v is None or (isinstance(v, str) and not v.strip()) or (isinstance(v, list) and not v)


def date(v):
    if not isinstance(v, str) or not DATE.match(v):
        return None
    try:
        return datetime.date.fromisoformat(v)
    except ValueError:
        return None


def is_node_id(s):
    head = s.split("[", 1)[0]
    parts = head.split("::")
    return bool(parts[0]) and not any(c.isspace() for c in parts[0]) and len(parts) > 1 and all(parts[1:])


def file_of(node_id):
    return node_id.split("[", 1)[0].split("::", 1)[0]


def main():
    d, today = sys.argv[1], datetime.date.fromisoformat(sys.argv[2])
    config = open(f"{d}/freezegate.toml").read()

    def param(key, default):
        m = re.search(rf"^{key}\s*=\s*(\d+)", config, re.M)
        return int(m.group(1)) if m else default

    ledger = json.load(open(f"{d}/freeze_ledger.json"))
    collected = set()
    for line in open(f"{d}/collected.txt"):
        line = line.strip()
        if not line or line.startswith("="):
            continue
        if line[0].isdigit():
            break
        assert "::" in line, line
        collected.add(line)
    changed = {l.strip() for l in open(f"{d}/changed.txt") if l.strip()}
    samples = json.load(open(f"{d}/samples.json"))["properties"]
    skipped = json.load(open(f"{d}/skipped.json"))
    min_distinct = param("min_distinct", 8)
    max_window = param("max_window_days", ledger.get("max_window_days") or 14)

    counts = {}

    def hit(code):
        counts[code] = counts.get(code, 0) + 1

    frozen = {e.get("test_id") for e in ledger["freezes"] if isinstance(e.get("test_id"), str)}
    seen = set()
    for e in ledger["freezes"]:
        for field in REQUIRED:
            if blank(e.get(field)):
                hit("FZ101")
        opened, expires = date(e.get("opened")), date(e.get("expires"))
        if opened is None and not blank(e.get("opened")):
            hit("FZ102")
        if expires is None and not blank(e.get("expires")):
            hit("FZ102")
        if expires and expires < today:
            hit("FZ103")
        if opened and expires:
            if expires < opened:
                hit("FZ105")
            elif (expires - opened).days > max_window:
                hit("FZ104")
        if opened and opened > today:
            hit("FZ105")
        test_id = e.get("test_id") or ""
        if test_id:
            if not is_node_id(test_id):
                hit("FZ108")
            if test_id in seen:
                hit("FZ106")
            seen.add(test_id)
            if is_node_id(test_id) and test_id not in collected:
                hit("FZ204")
        prop = e.get("compensating_property")
        props = [prop] if isinstance(prop, str) else [p for p in (prop or []) if isinstance(p, str)]
        for p in props:
            if not is_node_id(p):
                hit("FZ108")
                continue
            if p == test_id:
                hit("FZ206")
                continue
            if p in frozen:
                hit("FZ203")
            if p not in collected:
                # An uncollected property is reported once (freezegate 0.2).
                hit("FZ201")
                continue
            if e.get("reused_property") is not True and file_of(p) not in changed:
                hit("FZ202")
            count = samples.get(p)
            if count is None:
                hit("FZ302")
            elif count["distinct"] < min_distinct:
                hit("FZ301")
    refused = set()
    for node_id in skipped:
        if node_id not in frozen and node_id not in refused:
            refused.add(node_id)
            hit("FZ401")
    print(json.dumps(dict(sorted(counts.items()))))


if __name__ == "__main__":
    main()
