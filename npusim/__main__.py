"""``python -m npusim ...``: the ``npusim`` command (npusim/cli.py)."""
from .cli import main

raise SystemExit(main())
