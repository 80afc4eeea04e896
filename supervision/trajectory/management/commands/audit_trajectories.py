"""``audit_trajectories [--input PATH]`` (CONTRACT §4).

With --input: every line is validated first. If any line is malformed, each bad line is reported on
stderr as ``line N: message`` and NOTHING is printed on stdout (exit 1) — the same all-or-nothing rule as
``import_transcripts``, so a caller never mistakes a partial output for the whole file. Otherwise one JSON
line per window: {"window_id", "label", "score", "explanation", "labels"} — ``labels`` is "suggested" when no
turn of the window carried a technique or client state and the portal's label suggester labelled them for
the audit (CONTRACT §9), "given" otherwise.

Without --input: audits the stored sessions (same service as the nightly job) and prints one summary line
{"sessions": n, "windows": n, "turns": n, "removed": n}.
"""

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from supervision.suggesting.loading import window_labeller
from supervision.trajectory.engine.io import BATCH, audit_lines
from supervision.trajectory.engine.resources import load_resources
from supervision.trajectory.services import trajectory_audit_sessions

# Below this many lines one process is quicker than starting workers.
POOL_MIN_LINES = 4 * BATCH


# The label suggester for windows nobody labelled (CONTRACT §9), loaded before any fork so the workers share it.
_labeller = None


def _audit_chunk(chunk: tuple[int, list[bytes]]) -> tuple[list[str], list[dict]]:
    first_lineno, lines = chunk
    return audit_lines(lines, first_lineno, labeller=_labeller)


class Command(BaseCommand):
    help = "Audit conversation windows (JSONL --input) or the stored sessions. A review aid, not a clinical judgement."

    def add_arguments(self, parser):
        parser.add_argument("--input", dest="input_path", help="JSONL, one window a line: {window_id, turns}")

    def handle(self, *args, input_path=None, **options):
        if input_path is None:
            summary = trajectory_audit_sessions()
            self.stdout.write(json.dumps(summary.as_dict()))
            return
        path = Path(input_path)
        try:
            with path.open("rb") as handle:
                lines = handle.read().split(b"\n")
        except OSError as exc:
            self.stderr.write(f"line 0: file: 입력 파일을 읽을 수 없습니다 ({path}): {exc.strerror or exc}")
            raise SystemExit(1) from None
        # Chunks of lines are parsed, validated and audited independently (in worker processes when there
        # are many, TRAJECTORY_AUDIT_PROCESSES); nothing is printed until every chunk is known to be valid.
        chunks = [(start + 1, lines[start : start + BATCH]) for start in range(0, len(lines), BATCH)]
        workers = settings.TRAJECTORY_AUDIT_PROCESSES
        load_resources()  # once, before any fork: the workers inherit the prepared rules
        global _labeller
        _labeller = window_labeller()
        if workers > 1 and len(lines) >= POOL_MIN_LINES and not multiprocessing.current_process().daemon:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                done = list(pool.map(_audit_chunk, chunks))
        else:
            done = [_audit_chunk(chunk) for chunk in chunks]
        errors = [error for chunk_errors, _ in done for error in chunk_errors]
        if errors:
            for error in errors:
                self.stderr.write(error)
            raise SystemExit(1)
        dumps = json.JSONEncoder(ensure_ascii=False).encode
        out = "\n".join(dumps(result) for _, results in done for result in results)
        if out:
            self.stdout.write(out)
