"""TranscriptReader.feed under hypothesis: never raises, consistent offsets, chunking-blind."""

from __future__ import annotations

import itertools
import json
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from purplemux.agents.claude.transcript import (
    END_OF_TURN,
    INTERRUPT_MARK,
    MAX_LINE,
    TranscriptReader,
    read_tail_state,
)
from purplemux.core.events import Event, TranscriptFacts, sanitize
from purplemux.core.machine import step
from purplemux.core.model import Session
from tests.hardening.helpers import assert_session_capped, hostile_text, json_value

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

timestamps = st.one_of(
    st.none(),
    st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
    ).map(lambda d: d.isoformat().replace("+00:00", "Z")),
    hostile_text,
    json_value,
)
ids = st.one_of(st.sampled_from(["u1", "u2", "u3", "t1", "t2", "m1"]), json_value)
long_text = st.integers(100, 5000).map(lambda n: "w" * n)
texts = st.one_of(
    hostile_text,
    long_text,
    st.sampled_from(
        [
            f"{INTERRUPT_MARK}]",
            "<command-name>/compact</command-name>",
            "<local-command-stdout>",
            "<bash-input>ls</bash-input>",
            "  ",
            "API Error: 502 " + "<html>" * 200,
        ]
    ),
)
text_block = st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(texts, json_value)})
tool_use = st.fixed_dictionaries(
    {"type": st.just("tool_use"), "id": ids, "name": st.one_of(hostile_text, long_text, json_value)}
)
tool_result = st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": ids})
counts = st.one_of(st.integers(-5, 10**12), st.booleans(), json_value)
usage = st.fixed_dictionaries(
    {},
    optional={
        k: counts
        for k in (
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        )
    },
)
user = st.fixed_dictionaries(
    {
        "type": st.just("user"),
        "message": st.fixed_dictionaries(
            {"content": st.one_of(texts, st.lists(st.one_of(text_block, tool_result), max_size=3))}
        ),
    },
    optional={
        "uuid": ids,
        "timestamp": timestamps,
        "isMeta": st.booleans(),
        "isSidechain": st.booleans(),
        "isCompactSummary": st.booleans(),
    },
)
assistant = st.fixed_dictionaries(
    {
        "type": st.just("assistant"),
        "message": st.fixed_dictionaries(
            {},
            optional={
                "id": ids,
                "model": st.one_of(
                    st.sampled_from(["claude-x", "<synthetic>"]), long_text, json_value
                ),
                "content": st.one_of(
                    st.lists(st.one_of(text_block, tool_use), max_size=3), json_value
                ),
                "usage": st.one_of(usage, json_value),
            },
        ),
    },
    optional={
        "uuid": ids,
        "timestamp": timestamps,
        "isApiErrorMessage": st.booleans(),
        "isSidechain": st.booleans(),
    },
)
api_error = st.fixed_dictionaries(
    {
        "type": st.just("assistant"),
        "isApiErrorMessage": st.just(True),
        "message": st.fixed_dictionaries(
            {
                "content": st.lists(
                    st.fixed_dictionaries({"type": st.just("text"), "text": texts}), max_size=3
                )
            }
        ),
    },
    optional={"uuid": ids, "timestamp": timestamps},
)
system = st.fixed_dictionaries(
    {
        "type": st.just("system"),
        "subtype": st.one_of(st.sampled_from(sorted(END_OF_TURN)), hostile_text),
    },
    optional={"uuid": ids, "timestamp": timestamps},
)
entry_line = st.one_of(user, assistant, assistant, api_error, system, json_value).map(
    lambda e: json.dumps(e).encode()  # ensure_ascii: lone surrogates travel as \\udXXX escapes
)
raw_line = st.one_of(
    st.binary(max_size=120).map(lambda b: b.replace(b"\n", b"")),
    st.integers(1, 2000).map(lambda d: b"[" * d),
    st.sampled_from([b"", b"\r", b"{", b'{"type": "user"', b"\xff\xfe", b"null", b"[]"]),
    st.integers(50, 3000).map(
        lambda n: b'{"type": "user", "message": {"content": "' + b"L" * n + b'"}}'
    ),
)
documents = st.tuples(
    st.lists(st.one_of(entry_line, entry_line, raw_line), max_size=25),
    st.one_of(st.just(b""), entry_line, raw_line),  # a partial last line, still being written
).map(lambda parts: b"".join(line + b"\n" for line in parts[0]) + parts[1].replace(b"\n", b""))


Case = tuple[bytes, list[bytes], int]
"""A document, its cut into chunks, and the reader's max_line."""


@st.composite
def chunked(draw: st.DrawFn) -> Case:
    doc = draw(documents)
    cuts = sorted(draw(st.lists(st.integers(0, len(doc)), max_size=12)))
    bounds = [0, *cuts, len(doc)]
    chunks = [doc[a:b] for a, b in itertools.pairwise(bounds)]
    # Mostly the real limit; sometimes one small enough that the skipping of long lines runs.
    max_line = draw(st.sampled_from([MAX_LINE, MAX_LINE, MAX_LINE, 300, 64]))
    return doc, chunks, max_line


def check_offsets(reader: TranscriptReader, fed: bytes) -> None:
    """offset counts every byte fed; the line start is just past the last newline; the bytes
    after it wait in the buffer (or are being skipped as an overlong line)."""
    assert reader.offset == len(fed)
    assert reader._line_start == fed.rfind(b"\n") + 1
    partial = fed[reader._line_start :]
    if reader._skipping:
        assert len(partial) > reader.max_line and not reader._buf
    else:
        assert bytes(reader._buf) == partial


def final_state(reader: TranscriptReader) -> tuple[Any, ...]:
    return (
        reader.state.turn,
        reader.state.snippet,
        reader.state.model,
        reader.state.tokens,
        reader.current_tool,
        reader.state.last_prompt_seen,
    )


@FUZZ
@given(case=chunked())
def test_feed_never_raises_and_offsets_stay_consistent(case: Case) -> None:
    doc, chunks, max_line = case
    reader = TranscriptReader("s", max_line=max_line)
    fed = b""
    for chunk in chunks:
        reader.feed(chunk)
        fed += chunk
        check_offsets(reader, fed)
    assert fed == doc


@FUZZ
@given(case=chunked())
def test_same_events_whatever_the_chunking(case: Case) -> None:
    doc, chunks, max_line = case
    whole = TranscriptReader("s", max_line=max_line)
    expected = whole.feed(doc, flush=False) + whole.feed(b"")

    # Held facts (flush=False), one flush at the end: exactly the same events.
    held = TranscriptReader("s", max_line=max_line)
    got: list[Event] = []
    for chunk in chunks:
        got += held.feed(chunk, flush=False)
    got += held.feed(b"")
    assert got == expected

    # Facts flushed per chunk (as the tailer does per read): the same state events, the same
    # facts once folded, the same final picture.
    eager = TranscriptReader("s", max_line=max_line)
    per_chunk: list[Event] = []
    for chunk in chunks:
        per_chunk += eager.feed(chunk)
    assert [e for e in per_chunk if not isinstance(e, TranscriptFacts)] == [
        e for e in expected if not isinstance(e, TranscriptFacts)
    ]
    assert final_state(eager) == final_state(whole)


@FUZZ
@given(case=chunked())
def test_what_a_transcript_sets_on_a_session_is_capped(case: Case) -> None:
    """Through the engine's sanitize and the reducer: the session fields stay within caps."""
    _, chunks, max_line = case
    reader = TranscriptReader("s", max_line=max_line)
    session = Session(id="s")
    for chunk in chunks:
        for event in reader.feed(chunk):
            session, _ = step(session, sanitize(event))
            assert_session_capped(session.to_json())
    json.dumps(session.to_json(), ensure_ascii=False).encode("utf-8")  # every sink can take it


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=documents, tail=st.sampled_from([16, 64, 4096]))
def test_read_tail_state_never_raises(doc: bytes, tail: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_bytes(doc)
        read_tail_state(path, "s", tail=tail)
