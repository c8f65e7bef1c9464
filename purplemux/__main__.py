"""python -m purplemux."""

from purplemux.cli import main

raise SystemExit(main())
