import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from supervision.exporting import golden_jsonl
from supervision.models import Session


class Command(BaseCommand):
    help = "Export sessions as golden JSONL (default) or as a csv/xlsx spreadsheet."

    def add_arguments(self, parser):
        parser.add_argument("--session", action="append", dest="sessions", metavar="CODE")
        parser.add_argument("--format", default="jsonl", choices=["jsonl", "csv", "xlsx"])
        parser.add_argument("--output", help="file to write (default: standard output; xlsx needs a file)")

    def handle(self, *args, sessions, format, output, **options):
        # The server's command line is the operator's: without --session it exports every session.
        queryset = Session.objects.select_related("trainee").order_by("code")
        if sessions is not None:
            queryset = queryset.filter(code__in=sessions)
            missing = sorted(set(sessions) - set(queryset.values_list("code", flat=True)))
            if missing:
                raise CommandError(f"없는 회기 코드: {', '.join(missing)}")
        if format == "jsonl":
            self._write_text(golden_jsonl(queryset), output)
            return
        from supervision.importing import spreadsheet_export

        if format == "csv":
            self._write_text(spreadsheet_export.csv_lines(queryset), output)
        else:
            if not output:
                raise CommandError("xlsx 형식은 --output 파일이 필요합니다.")
            spreadsheet_export.write_xlsx(queryset, Path(output))

    def _write_text(self, chunks, output) -> None:
        if output:
            with open(output, "w", encoding="utf-8", newline="") as handle:
                handle.writelines(chunks)
        else:
            for chunk in chunks:
                sys.stdout.write(chunk)
