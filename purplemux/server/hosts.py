"""What the routes show of the broker link: its health."""

from __future__ import annotations

from typing import Any

from purplemux.daemon.runtime import Runtime


def broker_health(rt: Runtime | None) -> dict[str, Any]:
    """`{"state": "off"}` without a broker, else connected / connecting / down and since when."""
    link = rt.broker if rt is not None else None
    return link.health() if link is not None else {"state": "off"}
