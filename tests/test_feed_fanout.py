"""The feed's fan-out: one message per turn of the loop, the same frame for every client, a
client whose socket is full dropped (it resyncs). The socket is the seam: a writer that keeps
the frames it is given stands in for uvicorn's transport (purplemux.server.wsframes)."""

from __future__ import annotations

import asyncio
import json

from purplemux.daemon.feed import GAP, HOLD, Feed, text_frame


class Socket:
    """What a client's socket was given; `full`: it refuses more (fallen behind)."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.full = False

    def write(self, frame: bytes) -> bool:
        if self.full:
            return False
        self.frames.append(frame)
        return True

    def messages(self) -> list[dict[str, object]]:
        out = []
        for f in self.frames:
            assert f[0] == 0x81  # one whole text frame
            n = f[1]
            start = 2 if n < 126 else 4 if n == 126 else 10
            out.append(json.loads(f[start:]))
        return out


def test_a_frame_carries_its_payload_at_every_length() -> None:
    for size in (0, 125, 126, 65535, 65536, 70000):
        payload = b"x" * size
        frame = text_frame(payload)
        assert frame.endswith(payload) and frame[0] == 0x81
        head = len(frame) - size
        assert head == (2 if size < 126 else 4 if size < 65536 else 10)


def test_changes_close_together_go_out_once_in_their_newest_state_to_every_client() -> None:
    async def go() -> tuple[Socket, Socket, int]:
        feed = Feed(lambda: [])
        a, b = Socket(), Socket()
        feed.subscribe(a)
        feed.subscribe(b)
        feed.publish_changes([{"id": "s1", "v": 1}, {"id": "s2", "v": 1}])
        feed.publish_changes([{"id": "s1", "v": 2}], ["s3"])
        feed.publish_changes([], ["s2"])
        await asyncio.sleep(0)
        feed.publish_changes([{"id": "s3", "v": 1}])  # the next turn: a message of its own
        feed.publish_changes([{"id": "s4", "v": 1}])
        await asyncio.sleep(0)
        assert len(a.frames) == 1  # sooner than GAP after the first: they wait for it
        await asyncio.sleep(GAP * 3)
        return a, b, feed.seq

    a, b, seq = asyncio.run(go())
    assert a.frames == b.frames and a.frames[0] is b.frames[0]  # made once, shared
    first, second = a.messages()
    assert (first["seq"], second["seq"], seq) == (1, 2, 2)
    assert first["sessions"] == [{"id": "s1", "v": 2}]
    assert first["removed"] == ["s3", "s2"]
    assert second["sessions"] == [{"id": "s3", "v": 1}, {"id": "s4", "v": 1}]
    assert second["removed"] == []


def test_a_client_whose_socket_is_full_is_dropped_and_the_others_go_on() -> None:
    async def go() -> tuple[Socket, Socket, bool, bool]:
        feed = Feed(lambda: [])
        slow, fast = Socket(), Socket()
        lagging, _ = feed.subscribe(slow)
        feed.subscribe(fast)
        slow.full = True
        feed.publish_changes([{"id": "s1"}])
        await asyncio.sleep(0)
        slow.full = False
        feed.publish_changes([{"id": "s2"}])
        await asyncio.sleep(GAP * 3)
        return slow, fast, lagging.overflowed, lagging.ended.is_set()

    slow, fast, overflowed, ended = asyncio.run(go())
    assert overflowed and ended and slow.frames == []
    assert [m["seq"] for m in fast.messages()] == [1, 2]


def test_a_broker_message_keeps_its_place_after_pending_changes() -> None:
    async def go() -> Socket:
        feed = Feed(lambda: [])
        sock = Socket()
        feed.subscribe(sock)
        feed.publish_changes([{"id": "s1"}])
        feed.publish({"type": "broker", "broker": {"state": "off"}})
        await asyncio.sleep(0)
        return sock

    got = [(m["type"], m["seq"]) for m in asyncio.run(go()).messages()]
    assert got == [("sessions", 1), ("broker", 2)]


def test_while_more_changes_are_coming_the_message_waits_for_them_up_to_a_bound() -> None:
    async def go() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
        feed = Feed(lambda: [])
        sock = Socket()
        feed.subscribe(sock)
        coming = [True]
        feed.busy = lambda: coming[0]
        feed.publish_changes([{"id": "s1", "v": 1}])
        await asyncio.sleep(0)
        feed.publish_changes([{"id": "s1", "v": 2}, {"id": "s2"}])
        await asyncio.sleep(0)
        assert sock.frames == []  # held: the engine has more queued
        coming[0] = False
        feed.flush()  # the engine is idle
        held = sock.messages()
        coming[0] = True
        feed.publish_changes([{"id": "s3"}])
        await asyncio.sleep(HOLD * 3)  # never idle: it goes out after HOLD all the same
        return held, sock.messages()[1:]

    held, bounded = asyncio.run(go())
    assert [(m["seq"], m["sessions"]) for m in held] == [(1, [{"id": "s1", "v": 2}, {"id": "s2"}])]
    assert [(m["seq"], m["sessions"]) for m in bounded] == [(2, [{"id": "s3"}])]
