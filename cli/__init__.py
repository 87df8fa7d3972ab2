"""The `qd` command line (installed as the `quadrants_cli` package)."""
