"""doctor's check of Codex: its hooks in each home's hooks.json, and trusted in config.toml."""

from __future__ import annotations

from purplemux.agents.codex import install as codex
from purplemux.agents.doctor import first, named
from purplemux.core.checks import Check
from purplemux.io.settings import Account, Settings


def check_codex_hooks(settings: Settings, account: Account | None = None) -> Check | None:
    """Codex's hooks: ours for every event in $CODEX_HOME/hooks.json, and trusted (a hash in
    config.toml that Codex accepts now: a modified one silently stops running). None when no
    Codex home exists here (Codex is optional). `account`: which home (default: the first)."""

    account = account or first(settings, "codex")
    if account is None:
        return None
    home = account.dir
    if not home.is_dir():
        return None
    script = settings.home / "status-hook.sh"
    title = named(settings, "codex hooks", account)
    fix = "run: purplemux install-hooks --agent codex" + (
        f" --account {account.label}" if title != "codex hooks" else ""
    )
    try:
        st = codex.status(home, codex.hook_command(script, settings.home))
    except codex.CodexConfigError as exc:
        return Check(title, "fail", str(exc), "fix the file, then " + fix)
    if not st.installed:
        missing = ", ".join(st.missing)
        return Check(title, "fail", f"missing for {missing} in {st.hooks_json}", fix)
    if st.modified:
        which = ", ".join(st.modified)
        why = f"changed since they were trusted ({which}): Codex skips them without a word"
        return Check(title, "fail", why, fix)
    if st.untrusted:
        which = ", ".join(st.untrusted)
        return Check(title, "fail", f"not trusted in {st.config_toml} ({which})", fix)
    if st.other_command:
        return Check(
            title,
            "warn",
            f"installed for another purplemux home or script ({', '.join(st.other_command)})",
            fix,
        )
    return Check(title, "ok", f"all {len(codex.EVENTS)} events, trusted, in {home}")


def checks(settings: Settings, account: Account) -> list[Check]:
    """The check of one Codex home (none when the home does not exist: Codex is optional)."""
    found = check_codex_hooks(settings, account)
    return [] if found is None else [found]
