"""The package version, in a module of its own: the ledger records it without importing skdp."""

__version__ = "0.1.0.dev0"
