"""The running daemon: the engine (the only writer), the change feed, the answering desk, the verbs
(actions) and the runtime that holds them together."""
