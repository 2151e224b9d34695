import os
collect_ignore = ["test_refunds.py"]


def pytest_ignore_collect(collection_path):
    return None
