"""The link to the shared Redis: publish our sessions, follow the others', beat, run commands.

Keys (all under `purplemux:`): `changes`, one Stream every host appends its session changes to
(capped with MAXLEN ~); `host:<name>:sessions`, a hash of the host's current sessions, so a
daemon that (re)connects loads everyone's state and then follows the stream from where it stood;
`host:<name>:alive`, the heartbeat (a key with a TTL); `hosts`, the set of names; and
`host:<name>:commands`, a stream of commands (dismiss) for the owner, answered on `reply:<id>`.
Redis may lose everything: on every (re)connect a daemon republishes its whole state and writes a
`sync` entry, which tells the others to reload its hash.

Wiring: what the link tells its owner is given when it is made (BrokerLink's `on_state`: the
new health when it connects or goes down).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # redis is imported when a broker is configured (about 10 MB less otherwise)
    from redis.asyncio import Redis

from purplemux.daemon.actions import Outcome
from purplemux.hosts.remote import MAX_HOST_ROWS, MAX_HOSTS, RemoteView, Row
from purplemux.hosts.rows import MAX_ROW_BYTES, beat_time

log = logging.getLogger(__name__)

PREFIX = "purplemux"
CHANGES = f"{PREFIX}:changes"
HOSTS = f"{PREFIX}:hosts"
STREAM_MAXLEN = 10_000
"""Entries kept in the change stream (approximately): Redis memory stays bounded."""
COMMANDS_MAXLEN = 1_000
BLOCK_MS = 1_000
BACKOFF_FIRST = 0.1
BACKOFF_MAX = 3.0
COMMAND_TIMEOUT = 15.0
"""Seconds a command waits for the owning host's answer."""
GOODBYE_TIMEOUT = 0.25
"""Seconds for each step of leaving (the heartbeat's delete, the close) when the daemon stops:
the two fit well inside the time every part gets to stop."""
COMMAND_TTL = 30.0
"""A command older than this when the owner reads it is dropped (its sender gave up)."""
OUTBOX = 10_000
READ_LIMIT = 4 * MAX_HOST_ROWS
"""Entries of one host's hash read on a (re)load, good or bad."""


def sessions_key(host: str) -> str:
    return f"{PREFIX}:host:{host}:sessions"


def alive_key(host: str) -> str:
    return f"{PREFIX}:host:{host}:alive"


def commands_key(host: str) -> str:
    return f"{PREFIX}:host:{host}:commands"


def reply_key(command_id: str) -> str:
    return f"{PREFIX}:reply:{command_id}"


class BrokerUnavailable(Exception):
    """The broker is down, or the owning host did not answer in time."""


def read_password(path: Path | None) -> str | None:
    """The broker's password, from the file the settings name (its first line)."""
    if path is None:
        return None
    text = path.read_text().splitlines()
    return text[0] if text else None


Executor = Callable[[str, str, dict[str, Any]], Awaitable[Outcome]]
"""Runs a command (kind, session id, its arguments) on this host's own session."""


class BrokerLink:
    """One daemon's connection to the shared Redis; reconnects with backoff, forever."""

    def __init__(
        self,
        url: str,
        me: str,
        view: RemoteView,
        local: Callable[[], list[Row]],
        execute: Executor,
        password: str | None = None,
        ttl: float = 10.0,
        prune_after: float = 86_400.0,
        clock: Callable[[], float] = time.time,
        on_state: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.url = url
        self.me = me
        self.view = view
        self.local = local
        self.execute = execute
        self.password = password
        self.ttl = ttl
        self.prune_after = prune_after
        self.clock = clock
        self.state = "connecting"
        self.since = clock()
        self.last_error: str | None = None
        self._client: Redis | None = None
        self._outbox: asyncio.Queue[tuple[str, str, str, bool]] = asyncio.Queue(OUTBOX)
        self._overflowed = False
        self._accepting = False
        """Outgoing changes are queued only after the state republished on connect was taken."""
        self._last_change = "0-0"
        self._last_command = "0-0"
        self._jobs: set[asyncio.Task[None]] = set()
        self.on_state = on_state
        """Told the new health when the link connects or goes down (the page's badge)."""

    # --- what the daemon calls -------------------------------------------------------------

    def publish_session(self, row: Row, notify: bool = False) -> None:
        """Queue one of our sessions' new JSON for the others (dropped while down: we republish)."""
        self._queue(("session", row["id"], json.dumps(row, separators=(",", ":")), notify))

    def publish_removed(self, session_id: str) -> None:
        self._queue(("removed", session_id, "", False))

    def _changed(self) -> None:
        if self.on_state is not None:
            try:
                self.on_state(self.health())
            except Exception:
                log.exception("a broker state listener failed")

    def health(self) -> dict[str, Any]:
        """`{"state": connected|connecting|down, "since": ts}` for /api/health and the page."""
        out: dict[str, Any] = {"state": self.state, "since": self.since}
        if self.state != "connected" and self.last_error:
            out["error"] = self.last_error
        return out

    async def command(
        self, host: str, kind: str, session_id: str, args: dict[str, Any] | None = None
    ) -> Outcome:
        """Send a command to the host that owns the session; wait for its acknowledgement."""
        client = self._client
        if client is None or self.state != "connected":
            raise BrokerUnavailable(f"the broker is {self.state}")
        cid = uuid.uuid4().hex
        fields: dict[Any, Any] = {"id": cid, "from": self.me, "kind": kind}
        fields.update(session=session_id, at=repr(self.clock()), args=json.dumps(args or {}))
        try:
            await client.xadd(commands_key(host), fields, maxlen=COMMANDS_MAXLEN, approximate=True)
            answer = await client.blpop([reply_key(cid)], timeout=COMMAND_TIMEOUT)
        except _redis_errors() as exc:
            raise BrokerUnavailable(f"the broker failed: {exc}") from None
        if answer is None:
            raise BrokerUnavailable(f"host {host!r} did not answer within {COMMAND_TIMEOUT:g}s")
        return _reply(host, str(answer[1]))

    def owner_of(self, session_id: str) -> str | None:
        """The other host that owns a session, or None (ours, or unknown)."""
        row = self.view.get(session_id)
        return str(row["host"]) if row is not None else None

    async def ask(self, verb: str, session_id: str, args: dict[str, Any]) -> Outcome:
        """Have the owner of a remote session act on it (503 when it or the broker is away)."""
        row = self.view.get(session_id)
        if row is None:
            return Outcome(404, {"error": f"no session {session_id!r}"})
        host = str(row["host"])
        if row.get("stale"):
            return Outcome(503, {"error": f"host {host!r} is offline"})
        try:
            reply = await self.command(host, verb, session_id, args)
        except BrokerUnavailable as exc:
            return Outcome(503, {"error": str(exc)})
        if verb == "dismiss" and reply.status == 200 and isinstance(reply.body.get("id"), str):
            self.view.apply(host, reply.body)  # the owner's answer is newer than the stream so far
        return reply

    # --- the connection loop ---------------------------------------------------------------

    async def run(self) -> None:
        """Connect, serve, and on any failure wait (backing off) and do it all again."""
        backoff = BACKOFF_FIRST
        while True:
            _unless_stopping()
            try:
                async with self._connect() as client:
                    try:
                        await self._start(client)
                        backoff = BACKOFF_FIRST
                        await self._serve(client)
                    except asyncio.CancelledError:
                        await self._goodbye(client)
                        raise
            except Exception as exc:  # the link must outlive any failure; cancellation passes
                # Stopping, and redis turned the cancellation into a connection error (a
                # TaskGroup then raises that, not the cancel): stop, do not reconnect.
                _unless_stopping(exc)
                cause = _first(exc)
                if not isinstance(cause, _redis_errors()):
                    log.error("the broker link failed; reconnecting", exc_info=cause)
                self._down(cause)
            finally:
                self._client = None
                self._accepting = False
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    async def _goodbye(self, client: Redis) -> None:
        """On shutdown: the others mark our rows stale now rather than when the TTL runs out."""
        if self.state == "connected":
            with contextlib.suppress(*_redis_errors(), asyncio.TimeoutError):
                await asyncio.wait_for(client.delete(alive_key(self.me)), GOODBYE_TIMEOUT)

    @contextlib.asynccontextmanager
    async def _connect(self) -> Any:
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        client: Redis = Redis.from_url(
            self.url,
            password=self.password,
            decode_responses=True,
            encoding_errors="replace",  # bytes that are not UTF-8 (anyone's) read as U+FFFD
            socket_connect_timeout=3,
            socket_timeout=BLOCK_MS / 1000 + COMMAND_TIMEOUT + 5,
            retry=Retry(NoBackoff(), 0),
        )
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(GOODBYE_TIMEOUT):  # stopping: bounded (issue 22)
                    await client.aclose()

    def _down(self, exc: BaseException) -> None:
        reason = str(exc) or type(exc).__name__
        if self.state != "down":
            log.warning(
                "broker %s is down (%s); serving local sessions, retrying",
                _safe(self.url),
                reason,
            )
            self.state = "down"
            self.since = self.clock()
            self.last_error = reason
            self._changed()
        self.last_error = reason

    async def _start(self, client: Redis) -> None:
        """Republish our state, then load everyone else's; only then are we connected."""
        await client.ping()
        # Outgoing changes queued so far are in the republished state: drop them first, then
        # take the state with no await between, so nothing falls in a gap.
        while not self._outbox.empty():
            self._outbox.get_nowait()
        self._overflowed = False
        self._accepting = True
        await self._republish(client, self.local())
        self._last_change = await _last_id(client, CHANGES)
        self._last_command = await _last_id(client, commands_key(self.me))
        for host in await self._hosts(client):
            await self._load_host(client, host)
        await self._presence(client)
        self._client = client
        if self.state != "connected":
            log.info("broker %s connected as host %r", _safe(self.url), self.me)
            self.state = "connected"
            self.since = self.clock()
            self.last_error = None
            self._changed()

    async def _republish(self, client: Redis, rows: list[Row]) -> None:
        me = self.me
        pipe = client.pipeline(transaction=True)
        pipe.delete(sessions_key(me))
        if rows:
            pipe.hset(
                sessions_key(me),
                mapping={r["id"]: json.dumps(r, separators=(",", ":")) for r in rows},
            )
        pipe.sadd(HOSTS, me)
        pipe.set(alive_key(me), repr(self.clock()), px=int(self.ttl * 1000))
        pipe.xadd(CHANGES, {"host": me, "kind": "sync"}, maxlen=STREAM_MAXLEN, approximate=True)
        await pipe.execute()

    async def _hosts(self, client: Redis) -> list[str]:
        """The other hosts named in the `hosts` set, as many as the view follows (scanned, so a
        forged set of a million names is never read whole)."""
        found: list[str] = []
        scanned = 0
        async for name in client.sscan_iter(HOSTS, count=100):
            scanned += 1
            host = str(name)
            if host != self.me and self.view.accepts(host):
                found.append(host)
            if len(found) >= MAX_HOSTS or scanned >= 10 * MAX_HOSTS:
                break
        return found

    async def _load_host(self, client: Redis, host: str) -> None:
        """A host's whole hash into the view, scanned: at most one good row more than the view
        holds, and READ_LIMIT entries in all, are read; a row over MAX_ROW_BYTES is refused
        unparsed."""
        if not self.view.accepts(host):
            return
        sessions: dict[str, Row] = {}
        read = 0
        async for sid, text in client.hscan_iter(sessions_key(host), count=500):
            read += 1
            data = self._parse(host, str(sid), str(text))
            if data is not None:
                sessions[str(sid)] = data
            if len(sessions) > MAX_HOST_ROWS or read >= READ_LIMIT:
                break
        self.view.replace_host(host, sessions)

    def _parse(self, host: str, sid: str, text: str) -> Row | None:
        """One row's JSON, or None (refused and logged once): too long, not an object, or filed
        under another id."""
        if len(text) > MAX_ROW_BYTES:
            self.view.refuse(host, sid, f"longer than {MAX_ROW_BYTES} bytes")
            return None
        data = _loads(text)
        if data is None or data.get("id") != sid:
            self.view.refuse(host, sid, "not a session row under its own id")
            return None
        return data

    async def _serve(self, client: Redis) -> None:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(self._reader(client))
            tg.create_task(self._writer(client))
            tg.create_task(self._beat(client))
            # Wait inside the group, not in its exit: on 3.11 a task failing while the group
            # waits in its exit leaves this task's cancel count raised for good (taken for a
            # stop); a failure here cancels this wait, which the group then takes back.
            await asyncio.get_running_loop().create_future()

    async def _reader(self, client: Redis) -> None:
        mine = commands_key(self.me)
        while True:
            _unless_stopping()
            streams = {CHANGES: self._last_change, mine: self._last_command}
            answer = await client.xread(streams, count=500, block=BLOCK_MS)  # type: ignore[arg-type]
            for stream, entries in _entries(answer):
                for entry_id, fields in entries:
                    if stream == mine:
                        self._last_command = entry_id
                        self._command(client, fields)
                    else:
                        self._last_change = entry_id
                        await self._change(client, fields)

    async def _change(self, client: Redis, fields: dict[str, str]) -> None:
        host, kind = fields.get("host", ""), fields.get("kind")
        if not host or host == self.me:
            return
        if kind == "session":
            data = self._parse(host, fields.get("id", ""), fields.get("data", ""))
            if data is not None:
                self.view.apply(host, data, notify=fields.get("notify") == "1")
        elif kind == "removed":
            self.view.remove(host, fields.get("id", ""))
        elif kind == "sync":
            await self._load_host(client, host)

    def _command(self, client: Redis, fields: dict[str, str]) -> None:
        try:
            at = float(fields.get("at", "0"))
        except ValueError:
            at = 0.0
        if not self.clock() - at <= COMMAND_TTL or "id" not in fields:  # NaN: too old
            return
        job = asyncio.create_task(self._answer(client, fields))
        self._jobs.add(job)
        job.add_done_callback(self._jobs.discard)

    async def _answer(self, client: Redis, fields: dict[str, str]) -> None:
        try:
            args = _loads(fields.get("args") or "{}") or {}
            reply = await self.execute(fields.get("kind", ""), fields.get("session", ""), args)
        except Exception as exc:
            log.exception("a broker command failed")
            reply = Outcome(500, {"error": f"the owning host failed: {exc}"})
        text = json.dumps({"status": reply.status, "body": reply.body, "host": self.me})
        with contextlib.suppress(*_redis_errors()):
            pipe = client.pipeline(transaction=True)
            pipe.lpush(reply_key(fields["id"]), text)
            pipe.expire(reply_key(fields["id"]), int(COMMAND_TTL))
            await pipe.execute()

    async def _writer(self, client: Redis) -> None:
        me = self.me
        while True:
            _unless_stopping()
            batch = [await self._outbox.get()]
            while len(batch) < 500 and not self._outbox.empty():
                batch.append(self._outbox.get_nowait())
            if self._overflowed:  # we dropped changes: send the whole state instead
                self._overflowed = False
                while not self._outbox.empty():
                    self._outbox.get_nowait()
                await self._republish(client, self.local())
                continue
            pipe = client.pipeline(transaction=False)
            for kind, sid, text, notify in batch:
                entry = {"host": me, "kind": kind, "id": sid}
                if kind == "session":
                    pipe.hset(sessions_key(me), sid, text)
                    entry.update(data=text, notify="1" if notify else "0")
                else:
                    pipe.hdel(sessions_key(me), sid)
                pipe.xadd(CHANGES, entry, maxlen=STREAM_MAXLEN, approximate=True)  # type: ignore[arg-type]
            await pipe.execute()

    async def _beat(self, client: Redis) -> None:
        """Our heartbeat, and a look at everyone else's, a few times per TTL."""
        every = max(0.2, self.ttl / 4)
        while True:
            _unless_stopping()
            await asyncio.sleep(every)
            pipe = client.pipeline(transaction=False)
            pipe.set(alive_key(self.me), repr(self.clock()), px=int(self.ttl * 1000))
            pipe.sadd(HOSTS, self.me)
            await pipe.execute()
            await self._presence(client)
            self.view.prune(self.clock(), self.prune_after)

    async def _presence(self, client: Redis) -> None:
        hosts = sorted(set(self.view.host_names()) - {self.me})
        if not hosts:
            return
        beats = await client.mget([alive_key(h) for h in hosts])
        now = self.clock()
        for host, beat in zip(hosts, beats, strict=True):
            self.view.presence(host, beat_time(None if beat is None else str(beat)), now)

    def _queue(self, item: tuple[str, str, str, bool]) -> None:
        if not self._accepting:
            return  # republished in full on reconnect
        try:
            self._outbox.put_nowait(item)
        except asyncio.QueueFull:
            self._overflowed = True


def _unless_stopping(cause: BaseException | None = None) -> None:
    """Raise CancelledError if this task was asked to stop: a client library that swallowed
    the cancellation (or turned it into an error) must not keep a loop of ours going."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError from cause


def _first(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (a TaskGroup's), or the exception itself."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _last_id(client: Redis, stream: str) -> str:
    """The id of a stream's newest entry ("0-0" when there is none): read from there on."""
    last = await client.xrevrange(stream, count=1)
    return str(last[0][0]) if last else "0-0"


def _entries(answer: Any) -> list[tuple[str, list[tuple[str, dict[str, str]]]]]:
    """XREAD's answer as (stream, entries) pairs, for RESP2 (a list) and RESP3 (a dict)."""
    if not answer:
        return []
    if isinstance(answer, dict):
        return [(str(k), [(str(i), f) for i, f in v[0]]) for k, v in answer.items()]
    return [(str(stream), [(str(i), f) for i, f in entries]) for stream, entries in answer]


def _loads(text: str) -> dict[str, Any] | None:
    """A JSON object, or None: not JSON, not an object, or nested past Python's stack."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _reply(host: str, text: str) -> Outcome:
    """The owning host's answer to a command as the API returns it; 502 for anything but a
    status (200-599) and a JSON object of a body (no NaN: the page could not read it)."""
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        data = None
    status = data.get("status") if isinstance(data, dict) else None
    body = data.get("body") if isinstance(data, dict) else None
    if type(status) is not int or not 200 <= status <= 599 or not isinstance(body, dict):
        return Outcome(502, {"error": f"host {host[:80]!r} sent an answer that is not one"})
    return Outcome(status, body)


def _safe(url: str) -> str:
    """The URL without a password, for logs."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest:
        rest = rest.rsplit("@", 1)[1]
    return f"{scheme}{sep}{rest}"


def _redis_errors() -> tuple[type[BaseException], ...]:
    """What a failing link raises (redis is loaded by then: only a connected link fails so)."""
    from redis.exceptions import RedisError

    return (RedisError, OSError)
