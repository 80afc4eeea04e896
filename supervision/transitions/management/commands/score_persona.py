import json
from pathlib import Path

from django.core.management.base import BaseCommand

from supervision.importing.records import RowError
from supervision.services import ServiceError
from supervision.transitions import counting, services
from supervision.transitions.reading import read_persona


class Command(BaseCommand):
    help = "Score a persona engine's simulated sessions (JSONL) against the golden transition table (CONTRACT §10)."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--rater", required=True, help="the persona engine's name, e.g. persona-7")
        parser.add_argument("--by", choices=counting.BY_CHOICES, default=counting.BY_CATEGORY)
        parser.add_argument("--min-support", type=int, default=counting.DEFAULT_MIN_SUPPORT)
        parser.add_argument("--save", action="store_true", help="keep the run (figures and counts)")

    def handle(self, *args, path, rater, by, min_support, save, **options):
        file_path = Path(path)
        if not file_path.is_file():
            return self._fail([RowError(0, "file", f"파일 '{path}'를 찾을 수 없습니다.")])
        if min_support < 1:
            return self._fail([RowError(0, "min_support", "최소 지지도(--min-support)는 1 이상이어야 합니다.")])
        if not rater.strip():
            return self._fail([RowError(0, "rater", "페르소나 엔진 이름(--rater)이 비어 있습니다.")])
        persona = read_persona(file_path)
        if not persona.ok:
            return self._fail(persona.errors)
        try:
            if save:
                run = services.persona_run_create(
                    persona=persona, rater=rater, by=by, min_support=min_support, file_name=file_path.name
                )
                figures = run.figures
                self.stdout.write(f"saved persona run {run.pk} ({persona.turns} turns)")
            else:
                figures = services.score_persona(persona, rater=rater.strip(), by=by, min_support=min_support)[0]
        except ServiceError as exc:
            return self._fail([RowError(0, "rater", str(exc))])
        self.stdout.write(json.dumps(figures, ensure_ascii=False))

    def _fail(self, errors: list[RowError]) -> None:
        for error in errors:
            self.stderr.write(str(error))
        self.stdout.write(json.dumps({"errors": [e.as_dict() for e in errors]}, ensure_ascii=False))
        raise SystemExit(1)
