"""``audit_trajectories [--input PATH]`` (CONTRACT §4).

With --input: every line is validated first. If any line is malformed, each bad line is reported on
stderr as ``line N: message`` and NOTHING is printed on stdout (exit 1) — the same all-or-nothing rule as
``import_transcripts``, so a caller never mistakes a partial output for the whole file. Otherwise one JSON
line per window: {"window_id", "label", "score", "explanation"}.

Without --input: audits the stored sessions (same service as the nightly job) and prints one summary line
{"sessions": n, "windows": n, "turns": n, "removed": n}.
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand

from supervision.trajectory.engine.io import audit_parsed, parse_windows
from supervision.trajectory.services import trajectory_audit_sessions


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
                windows, errors = parse_windows(handle)
        except OSError as exc:
            self.stderr.write(f"line 0: file: 입력 파일을 읽을 수 없습니다 ({path}): {exc.strerror or exc}")
            raise SystemExit(1) from None
        if errors:
            for error in errors:
                self.stderr.write(error)
            raise SystemExit(1)
        for result in audit_parsed(windows):
            self.stdout.write(json.dumps(result, ensure_ascii=False))
