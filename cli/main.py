"""`qd`: the command-line entry point. Thin: click parses, library functions do the work."""

from __future__ import annotations

import click

from quadrants._version import __version__

DISTRIBUTION = "quadrants-fastcache"  # the name pip installs (pyproject.toml), not the import name


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", "-V", prog_name="qd", message=f"%(prog)s ({DISTRIBUTION}, import "
                      "quadrants) %(version)s")  # fmt: skip
def main() -> None:
    """quadrants: compile kernels ahead of time and manage their caches."""
    from quadrants._config import check_environment
    from quadrants_cli.common import fail_usage

    why = check_environment()
    if why is not None:
        fail_usage(why)


def _register() -> None:
    from quadrants_cli.audit import audit
    from quadrants_cli.cache import cache
    from quadrants_cli.precompile import precompile
    from quadrants_cli.record import record

    main.add_command(precompile)
    main.add_command(audit)
    main.add_command(cache)
    main.add_command(record)


_register()


if __name__ == "__main__":
    main()
