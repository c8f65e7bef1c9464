"""Which thread each Codex pane shows (agents/codex/panes.py): the rules, and where they stop."""

from __future__ import annotations

from purplemux.agents.codex.pane_title import Layout, parse_title
from purplemux.agents.codex.panes import Link, Thread, TuiPane, link
from purplemux.core.model import TmuxLocation

HOME = "/home/u/.codex"
PROJ = "/home/u/proj"


RUN_ID = Layout(("spinner", "run-state", "thread-id", "project-name"))
"""A `[tui] terminal_title` that shows the thread id."""


def pane(
    pid: int,
    pane_id: str,
    title: str,
    started: float,
    cwd: str = PROJ,
    layout: Layout | None = None,
    home: str = HOME,
) -> TuiPane:
    return TuiPane(
        TmuxLocation(pane_id, "/tmp/tmux-1/default", "w", "0"),
        pid,
        started,
        cwd,
        home,
        parse_title(title, cwd.rsplit("/", 1)[-1], layout or Layout()),
    )


def thread(tid: str, created: float, title: str | None = None, cwd: str = PROJ) -> Thread:
    return Thread(id=tid, home=HOME, created=created, cwd=cwd, title=title)


def threads_of(links: dict[tuple[str, str], Link]) -> dict[str, str]:
    return {key[1]: ln.thread for key, ln in links.items()}


def test_a_fresh_tui_gets_the_untitled_thread_created_after_it_started() -> None:
    panes = [pane(10, "%0", "proj", started=100.0)]
    old = thread("t-old", created=50.0)  # before the TUI: another TUI's, long gone
    new = thread("t-new", created=104.0)
    assert threads_of(link(panes, [old, new], {}, now=105.0)) == {"%0": "t-new"}


def test_two_panes_started_apart_each_get_their_own_thread() -> None:
    panes = [pane(10, "%0", "proj", 100.0), pane(11, "%1", "proj", 120.0)]
    threads = [thread("t0", 106.0), thread("t1", 121.0)]
    assert threads_of(link(panes, threads, {}, now=125.0)) == {"%0": "t0", "%1": "t1"}


def test_two_fresh_panes_started_together_in_one_folder_get_nothing_until_a_prompt() -> None:
    panes = [pane(10, "%0", "proj", 100.0), pane(11, "%1", "proj", 101.0)]
    threads = [thread("t0", 105.0), thread("t1", 106.0)]
    assert link(panes, threads, {}, now=110.0) == {}
    # The first prompts tell them apart: each title now names its thread's title.
    prompted = [
        pane(10, "%0", "fix the login | proj", 100.0),
        pane(11, "%1", "add tests | proj", 101.0),
    ]
    titled = [thread("t0", 105.0, "fix the login"), thread("t1", 106.0, "add tests")]
    assert threads_of(link(prompted, titled, {}, now=120.0)) == {"%0": "t0", "%1": "t1"}


def test_a_pane_that_already_has_its_thread_is_no_rival_of_a_new_one() -> None:
    first = link([pane(10, "%0", "proj", 100.0)], [thread("t0", 101.0)], {}, now=102.0)
    panes = [pane(10, "%0", "proj", 100.0), pane(11, "%1", "proj", 103.0)]
    threads = [thread("t0", 101.0), thread("t1", 104.0)]
    assert threads_of(link(panes, threads, first, now=105.0)) == {"%0": "t0", "%1": "t1"}


def test_the_title_naming_the_thread_id_is_exact() -> None:
    panes = [pane(10, "%0", "Ready | 01a2333b-f7f0-74e3-863a-94b9e... | proj", 100.0, PROJ, RUN_ID)]
    threads = [
        thread("01a2333b-f7f0-74e3-863a-94b9e1111111", 90.0, "same"),
        thread("01a2333b-f7f0-74e3-863a-0000000000aa", 91.0, "same"),
    ]
    assert threads_of(link(panes, threads, {}, now=120.0)) == {
        "%0": "01a2333b-f7f0-74e3-863a-94b9e1111111"
    }


def test_the_same_first_prompt_in_two_panes_keeps_the_pane_each_had() -> None:
    panes = [pane(10, "%0", "hello | proj", 100.0), pane(11, "%1", "hello | proj", 200.0)]
    threads = [thread("t0", 101.0, "hello"), thread("t1", 201.0, "hello")]
    assert link(panes, threads, {}, now=300.0) == {}  # two readings: nobody is placed
    before = {
        ("/tmp/tmux-1/default", "%0"): Link("t0", 10, 101.5, 101.0),
        ("/tmp/tmux-1/default", "%1"): Link("t1", 11, 201.5, 201.0),
    }
    assert threads_of(link(panes, threads, before, now=300.0)) == {"%0": "t0", "%1": "t1"}


def test_clear_moves_the_pane_to_the_thread_made_after_its_last_one() -> None:
    before = {("/tmp/tmux-1/default", "%0"): Link("t0", 10, 101.0, 101.0)}
    panes = [pane(10, "%0", "proj", 100.0)]  # after /clear: the project only again
    threads = [thread("t0", 101.0, "hello"), thread("t-clear", 150.0)]
    assert threads_of(link(panes, threads, before, now=151.0)) == {"%0": "t-clear"}


def test_a_quit_tui_or_another_folder_gets_no_thread() -> None:
    quit_pane = pane(10, "%0", "", 100.0)
    elsewhere = pane(11, "%1", "proj", 100.0, cwd="/home/u/other")
    threads = [thread("t0", 101.0, cwd=PROJ)]
    assert link([quit_pane, elsewhere], threads, {}, now=102.0) == {}


B_ID = "01a2333b-f7f0-74e3-863a-94b9e1111111"
A_ID = "01a2333c-0000-74e3-863a-94b9e2222222"


def test_a_first_prompt_holding_another_threads_id_takes_nobodys_pane() -> None:
    """Security review, critical: A's first prompt was `deploy | <B's id>` (or its 29-character
    prefix and "..."); Codex draws it verbatim in A's title. B's pane stays B's, A's is A's."""
    for shown in (B_ID, f"{B_ID[:29]}..."):
        prompt = f"deploy | {shown}"
        panes = [
            pane(10, "%0", f"{prompt} | proj", 100.0),  # started first: it was taken first
            pane(11, "%1", "hello | proj", 200.0),
        ]
        threads = [thread(A_ID, 101.0, prompt), thread(B_ID, 201.0, "hello")]
        assert threads_of(link(panes, threads, {}, now=300.0)) == {"%0": A_ID, "%1": B_ID}
        # B's pane not drawn yet (a quick look): A still never takes B.
        alone = link([panes[0]], [thread(B_ID, 201.0, "hello")], {}, now=300.0)
        assert alone == {}


def test_with_the_id_in_the_layout_the_users_text_still_claims_no_id() -> None:
    """`[tui] terminal_title` with both the thread title and its id: only the id's own place is
    read, and a reading where the user's text could be the id names none."""
    shown = Layout(("spinner", "thread-title", "thread-id", "project-name"))
    title = f"deploy | {B_ID} | {A_ID[:29]}... | proj"
    panes = [pane(10, "%0", title, 100.0, PROJ, shown)]
    threads = [thread(A_ID, 101.0, f"deploy | {B_ID}"), thread(B_ID, 90.0, "x")]
    assert threads_of(link(panes, threads, {}, now=300.0)) == {"%0": A_ID}


def test_an_id_in_its_place_links_only_a_thread_of_the_panes_own_home_and_folder() -> None:
    title = f"Ready | {B_ID[:29]}... | proj"
    elsewhere = Thread(id=B_ID, home="/home/v/.codex", created=90.0, cwd=PROJ, title="x")
    other_folder = thread(B_ID, 90.0, "x", cwd="/home/u/other")
    for t in (elsewhere, other_folder):
        assert link([pane(10, "%0", title, 100.0, PROJ, RUN_ID)], [t], {}, now=120.0) == {}
    assert threads_of(
        link([pane(10, "%0", title, 100.0, PROJ, RUN_ID)], [thread(B_ID, 90.0, "x")], {}, 120.0)
    ) == {"%0": B_ID}
