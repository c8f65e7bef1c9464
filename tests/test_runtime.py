"""create_app builds the daemon's adapters from the settings, or takes the ones a test gives."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from purplemux.daemon.runtime import Adapters, default_adapters
from purplemux.io.logins import Logins
from purplemux.io.settings import Settings
from purplemux.io.tmux_control import TmuxControl
from purplemux.server.app import create_app
from tests.support import settings_for


def test_the_default_adapters_follow_the_settings(tmp_path: Path) -> None:
    env = {"PURPLEMUX_HOME": str(tmp_path / "h"), "TMUX_TMPDIR": str(tmp_path / "t")}
    settings = Settings.from_env(env)
    made = default_adapters(settings, "tok")
    # The default tmux server's socket is where TMUX_TMPDIR (read by Settings) says.
    assert made.tmux.key(None) == settings.tmux_default_socket
    assert settings.tmux_default_socket.startswith(str(tmp_path / "t") + "/tmux-")
    assert made.tmux.key("/other.sock") == "/other.sock"
    assert made.logins.path == tmp_path / "h" / "logins"
    assert Settings.from_env({"PURPLEMUX_HOME": "/x"}).tmux_tmpdir == "/tmp"


def test_create_app_takes_the_adapters_a_test_gives(tmp_path: Path) -> None:
    given: list[Adapters] = []

    def adapters(settings: Settings, token: str) -> Adapters:
        made = Adapters(
            tmux=TmuxControl(default_socket=str(tmp_path / "tmux.sock")),
            logins=Logins(tmp_path / "my-logins", token),
        )
        given.append(made)
        return made

    with TestClient(create_app(settings_for(tmp_path), components=[], adapters=adapters)) as c:
        token = (tmp_path / "home" / "token").read_text().strip()
        r = c.get(f"/?token={token}", follow_redirects=False)
        assert r.status_code == 200 and "purplemux_login" in r.cookies  # the sign-in page
        [made] = given
        rt = c.app.state.runtime  # type: ignore[attr-defined]
        assert (rt.tmux, rt.logins) == (made.tmux, made.logins)
    # The login went to the logins the test gave, not to the home's file.
    assert (tmp_path / "my-logins").read_text().strip()
    assert not (tmp_path / "home" / "logins").exists()
