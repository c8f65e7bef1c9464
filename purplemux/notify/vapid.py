"""The daemon's VAPID key pair (RFC 8292): created once, kept private, reused."""

from __future__ import annotations

import base64
import logging
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# cryptography and py_vapid are imported when the keys are first needed (a page subscribing,
# a push to send): a daemon nobody subscribes to never loads them.
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import ec

log = logging.getLogger(__name__)

KEY_FILE = "vapid_private.pem"


@dataclass(frozen=True, slots=True)
class VapidKeys:
    """The signer pywebpush uses, and the public key browsers subscribe with."""

    vapid: Any  # py_vapid.Vapid (untyped library)
    application_server_key: str
    path: Path


def load_or_create_keys(home: Path) -> VapidKeys:
    """Load `home/vapid_private.pem`, creating it (mode 0600) on first use."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    # py_vapid ships no type information; Vapid is the RFC 8292 (`vapid` scheme) signer.
    from py_vapid import Vapid  # type: ignore[import-untyped]

    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = home / KEY_FILE
    if not path.exists():
        _create(path)
    _tighten(path)
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise ValueError(f"{path} does not hold a P-256 private key; remove it to make a new one")
    return VapidKeys(
        vapid=Vapid(private_key=key), application_server_key=_public_b64(key), path=path
    )


def _create(path: Path) -> None:
    """Write a new key to a private temp file, then link it into place (first writer wins)."""
    from py_vapid import Vapid

    vapid = Vapid()
    vapid.generate_keys()
    pem: bytes = vapid.private_pem()
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    # O_EXCL + mode 0600 at creation: the key is never readable by others, not even briefly.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
            f.flush()
            os.fsync(f.fileno())
        try:
            # link() fails if another process created the key meanwhile: keep theirs, so
            # subscriptions made with it stay valid.
            os.link(tmp, path)
            log.info("created VAPID key %s", path)
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)


def _tighten(path: Path) -> None:
    """A key file readable by group or others (copied in by hand, say) is made private."""
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("%s had mode %o; setting 0600", path, mode)
        path.chmod(0o600)


def _public_b64(key: ec.EllipticCurvePrivateKey) -> str:
    """The 65-byte uncompressed public point, base64url without padding."""
    from cryptography.hazmat.primitives import serialization

    raw = key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")
