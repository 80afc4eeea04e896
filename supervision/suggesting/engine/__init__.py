"""The label suggester's engine (CONTRACT §9): features, the stored model and its training. No Django here:
the management commands, the import hook and the benchmarks share it, and the tests run it on plain lists."""
