"""The daemon's long-running parts (live sources, spool, notifier, pane marker), each run and
restarted by the supervisor in the app's lifespan."""
