"""The pure core: the session record, typed events, the state machine and what people read of
them. No I/O, no clock, no outside library but orjson: each is a function of its input."""
