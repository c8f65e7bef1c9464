"""Where the files that ship with purplemux are: the hook script and the web assets."""

from __future__ import annotations

from pathlib import Path

import purplemux

_PACKAGE = Path(purplemux.__file__).resolve().parent


def _shipped(relative: str) -> Path:
    # An installed wheel carries hooks/ and web/ inside the package; a source checkout (and an
    # editable install) has them at the top of the repository, next to the package.
    packaged = _PACKAGE / relative
    return packaged if packaged.exists() else _PACKAGE.parent / relative


def hook_script() -> Path:
    """The status hook script that install-hooks copies to the daemon home."""
    return _shipped("hooks/status-hook.sh")


def statusline_script() -> Path:
    """The statusLine wrapper that install-hooks copies next to the hook script."""
    return _shipped("hooks/statusline.sh")


def web_dir() -> Path:
    """The folder holding the dashboard's templates/ and static/."""
    return _shipped("web")
