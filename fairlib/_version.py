"""The version of fairlib, in a module of its own: no module needs to import the package `__init__` for it."""

__version__ = "0.1.0"
