"""soupd runtime: supervision tree, daemon, router, config, CLI."""

__soupd__ = True
