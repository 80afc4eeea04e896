import json
from pathlib import Path

from django.core.management.base import BaseCommand

from supervision.agreement import services
from supervision.agreement.models import RaterKind
from supervision.agreement.reading import read_run
from supervision.importing.records import RowError
from supervision.services import ServiceError


class Command(BaseCommand):
    help = "Score an annotation run (JSONL) against the golden labels or a saved run (CONTRACT §7)."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--rater", required=True, help="the rater's name, e.g. eval-ai-3")
        parser.add_argument("--kind", choices=RaterKind.values, default=RaterKind.AI)
        parser.add_argument("--save", action="store_true", help="keep the run to compare with later")
        parser.add_argument("--against", default=services.GOLDEN, help="golden (default) or a saved rater's name")
        parser.add_argument("--note", default="", help="model version or annotator note kept with --save")

    def handle(self, *args, path, rater, kind, save, against, note, **options):
        file_path = Path(path)
        if not file_path.is_file():
            return self._fail([RowError(0, "file", f"파일 '{path}'를 찾을 수 없습니다.")])
        run_file = read_run(file_path)
        if not run_file.ok:
            return self._fail(run_file.errors)
        try:
            reference = None if against == services.GOLDEN else services.score_against_rater(against)
        except ServiceError as exc:
            return self._fail([RowError(0, "against", str(exc))])
        figures = services.score_ratings(run_file.ratings, run_file.session_ids, rater=rater, against=reference)
        alpha = services.alpha_across_sources(extra=(rater, run_file))
        if any(axis["alpha"] is not None for axis in alpha["axes"].values()):
            shown = ", ".join(f"{name} {axis['alpha']}" for name, axis in alpha["axes"].items())
            self.stdout.write(f"Krippendorff alpha ({', '.join(alpha['sources'])}): {shown}")
        if save:
            try:
                run = services.annotation_run_create(
                    run_file=run_file, rater=rater, kind=kind, note=note, file_name=file_path.name
                )
            except ServiceError as exc:
                return self._fail([RowError(0, "rater", str(exc))])
            self.stdout.write(f"saved annotation run {run.pk} ({len(run_file.lines)} turns)")
        self.stdout.write(json.dumps(figures, ensure_ascii=False))

    def _fail(self, errors: list[RowError]) -> None:
        for error in errors:
            self.stderr.write(str(error))
        self.stdout.write(json.dumps({"errors": [e.as_dict() for e in errors]}, ensure_ascii=False))
        raise SystemExit(1)
