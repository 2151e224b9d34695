"""freezegate: keeps skipped tests honest.

The command-line gate is the ``freezegate`` executable this wheel installs; this package
holds its pytest plugin (:mod:`freezegate.plugin`), enabled with ``pytest --freezegate``.
"""
