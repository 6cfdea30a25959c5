"""``python -m npusim ...``: the ``npusim`` command (npusim/cli/)."""
from .cli import main

raise SystemExit(main())
