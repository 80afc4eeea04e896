import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from supervision.importing.records import RowError
from supervision.importing.services import ImportReport, import_file


class Command(BaseCommand):
    help = "Import transcripts from .jsonl (golden), .csv or .xlsx. All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--dry-run", action="store_true", help="validate and report, write nothing")
        parser.add_argument("--trainee", help="username of the trainee the sessions belong to")

    def handle(self, *args, path, dry_run, trainee, **options):
        file_path = Path(path)
        if not file_path.is_file():
            report = ImportReport(errors=[RowError(0, "file", f"파일 '{path}'를 찾을 수 없습니다.")])
        else:
            progress = self._progress if sys.stderr.isatty() else None
            report = import_file(file_path, trainee_username=trainee, dry_run=dry_run, progress=progress)
        for warning in report.warnings:
            self.stderr.write(f"warning: {warning}")
        for error in report.errors:
            self.stderr.write(str(error))
        self.stdout.write(json.dumps(report.summary(), ensure_ascii=False))
        if report.errors:
            raise SystemExit(1)

    def _progress(self, phase: str, done: int, total: int) -> None:
        self.stderr.write(f"\r{phase}: {done:,}" + (f"/{total:,}" if total else ""), ending="")
        self.stderr.flush()
