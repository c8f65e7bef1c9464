"""Generic live sources: what any agent leaves behind (hook calls, the spool, transcripts tailed,
processes seen) turned into typed events; what one agent knows comes from its package."""
