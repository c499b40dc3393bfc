"""``hrimport sandbox ...`` commands (placeholder until the sandbox lands)."""

from __future__ import annotations

import click


@click.group()
def sandbox() -> None:
    """Run and administer the local sandbox service."""
