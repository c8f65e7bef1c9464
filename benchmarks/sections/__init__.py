"""The sections of BENCHMARKS.md, one module each: a function that measures and writes one."""
