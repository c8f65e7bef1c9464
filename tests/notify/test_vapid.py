"""VAPID keys: made once, private, reused; the key browsers subscribe with."""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from purplemux.notify import vapid
from purplemux.notify.vapid import KEY_FILE, load_or_create_keys


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_key_is_created_private_and_reused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = load_or_create_keys(home)
    path = home / KEY_FILE
    assert first.path == path
    assert mode(path) == 0o600
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert [p.name for p in home.iterdir()] == [KEY_FILE]  # no temp file left behind

    before = path.stat().st_mtime_ns
    second = load_or_create_keys(home)
    assert second.application_server_key == first.application_server_key
    assert path.stat().st_mtime_ns == before


def test_key_is_private_even_with_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        load_or_create_keys(tmp_path)
    finally:
        os.umask(old)
    assert mode(tmp_path / KEY_FILE) == 0o600


def test_application_server_key_is_the_uncompressed_point(tmp_path: Path) -> None:
    keys = load_or_create_keys(tmp_path)
    text = keys.application_server_key
    assert "=" not in text and "+" not in text and "/" not in text
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    assert len(raw) == 65 and raw[0] == 0x04
    public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), raw)
    assert public.public_numbers() == keys.vapid.public_key.public_numbers()


def test_a_readable_key_file_is_made_private(tmp_path: Path) -> None:
    load_or_create_keys(tmp_path)
    (tmp_path / KEY_FILE).chmod(0o644)
    load_or_create_keys(tmp_path)
    assert mode(tmp_path / KEY_FILE) == 0o600


def test_a_foreign_key_is_refused(tmp_path: Path) -> None:
    pem = ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    (tmp_path / KEY_FILE).write_bytes(pem)
    with pytest.raises(ValueError, match="P-256"):
        load_or_create_keys(tmp_path)


def test_a_key_created_meanwhile_by_another_process_wins(tmp_path: Path) -> None:
    first = load_or_create_keys(tmp_path)
    # As if another daemon lost the race: it must keep the key already in place.
    vapid._create(tmp_path / KEY_FILE)
    assert load_or_create_keys(tmp_path).application_server_key == first.application_server_key
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE]
