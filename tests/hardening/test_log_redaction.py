"""The token never reaches the daemon's log, however a client percent-encodes it in a URL."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from purplemux.server.serve import RedactTokens
from tests.support import Daemon

SECRET = "s3cr3t-" + "Ab0_-" * 8


@pytest.mark.parametrize(
    "line",
    [
        f"GET /?token={SECRET} HTTP/1.1",
        f"GET /?tok%65n={SECRET}",
        f"GET /?%74oken={SECRET}&x=1",
        f"GET /?ToKeN={SECRET}",
        f"GET /?a=1&my_TOKEN={quote(SECRET, safe='')}",
        f"GET /?tok%2565n={SECRET}",  # encoded twice
    ],
)
def test_a_token_parameter_loses_its_value_however_named(line: str) -> None:
    out = RedactTokens().clean(line)
    assert SECRET not in out and "<redacted>" in out


def test_the_daemon_token_is_blanked_in_any_encoding() -> None:
    redact = RedactTokens([SECRET])
    every_char = "".join(f"%{b:02x}" for b in SECRET.encode())
    for line in (f"/x/{SECRET}", f"/?q={every_char}", f"'{quote(quote(SECRET, safe=''))}'"):
        assert SECRET not in redact.clean(line)
        assert every_char not in redact.clean(line)
    assert redact.clean("nothing secret here %41") == "nothing secret here %41"


def test_percent_encoded_token_parameters_stay_out_of_the_log(daemon: Daemon) -> None:
    token = daemon.token
    every_char = "".join(f"%{b:02x}" for b in token.encode())
    queries = [
        f"tok%65n={token}",
        f"%74oken={token}",
        f"ToKeN={token}",
        f"TOK%45N={quote(token, safe='')}",
        f"q={every_char}",
    ]
    for query in queries:
        with pytest.raises(InvalidStatus):  # no credentials: refused, but logged by uvicorn
            connect(f"ws://127.0.0.1:{daemon.port}/api/stream?{query}").close()
    daemon.stop()
    logs = daemon.logs()
    assert "/api/stream" in logs  # the handshakes were logged: the check below means something
    for secret in (token, quote(token, safe=""), every_char, every_char.upper()):
        assert secret not in logs, logs
