"""``suggest_labels --input PATH`` | ``suggest_labels [--session CODE …]`` (CONTRACT §9).

With --input: §2 lines or §4 windows; one JSON line per turn in input order, or — when any line is
malformed — every problem on stderr as ``row N, column C: message``, nothing on stdout, exit 1.
Without --input: (re)suggests the stored turns of the sessions named (all sessions when none is named),
replacing their rows in the model version's run; last stdout line ``{"model_version", "sessions", "turns"}``.
"""

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from supervision.models import Session
from supervision.suggesting.engine.model import AXIS_OF_SPEAKER
from supervision.suggesting.loading import current_model, refusal
from supervision.suggesting.reading import read_input
from supervision.suggesting.services import suggestions_refresh


class Command(BaseCommand):
    help = "Suggest techniques and client states for turns (a file with --input, else the stored sessions)."

    def add_arguments(self, parser):
        parser.add_argument("--input", dest="input_path", help="§2 lines or §4 windows (JSONL)")
        parser.add_argument("--session", dest="sessions", nargs="+", default=[], metavar="CODE")

    def handle(self, *args, input_path=None, sessions=(), **options):
        model = current_model()
        if model is None:
            self.stderr.write(f"row 0, column file: {refusal() or '제안 모델을 읽을 수 없습니다.'}")
            raise SystemExit(1)
        if input_path is None:
            self._stored(sessions)
            return
        try:
            data = Path(input_path).read_bytes()
        except OSError as exc:
            self.stderr.write(f"row 0, column file: 입력 파일을 읽을 수 없습니다 ({input_path}): {exc.strerror or exc}")
            raise SystemExit(1) from None
        read = read_input(data, model.turns_before)
        if read.errors:
            for row, column, message in sorted(read.errors, key=lambda e: e[0]):
                self.stderr.write(f"row {row}, column {column}: {message}")
            raise SystemExit(1)
        out = sys.stdout
        encode = json.JSONEncoder(ensure_ascii=False).encode
        version = model.version
        step = 20_000
        for start in range(0, len(read.inputs), step):
            speakers = read.speakers[start : start + step]
            suggestions = model.suggest(read.inputs[start : start + step], speakers)
            lines = []
            for utterance_id, speaker, suggestion in zip(
                read.utterance_ids[start : start + step], speakers, suggestions, strict=True
            ):
                axis = AXIS_OF_SPEAKER[speaker]
                lines.append(
                    encode(
                        {
                            "utterance_id": utterance_id,
                            "techniques": suggestion.labels if axis == "techniques" else [],
                            "client_states": suggestion.labels if axis == "client_states" else [],
                            "scores": suggestion.scores,
                            "model_version": version,
                        }
                    )
                )
            out.write("\n".join(lines) + "\n")
        out.flush()

    def _stored(self, codes):
        found = dict(Session.objects.filter(code__in=codes).values_list("code", "pk")) if codes else None
        if codes:
            missing = sorted(set(codes) - set(found))
            if missing:
                for code in missing:
                    self.stderr.write(f"row 0, column session: 회기 '{code}'가 없습니다.")
                raise SystemExit(1)
            session_ids = sorted(found.values())
        else:
            session_ids = list(Session.objects.order_by("pk").values_list("pk", flat=True))
        self.stdout.write(json.dumps(suggestions_refresh(session_ids=session_ids), ensure_ascii=False))
