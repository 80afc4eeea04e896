import datetime
import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from supervision import nightly
from supervision.gauge import services
from supervision.gauge.locks import nightly_lock


class Command(BaseCommand):
    help = "Run the nightly review (review gauge and later steps) for one day, like the nightly job."

    def add_arguments(self, parser):
        parser.add_argument("--date", help="YYYY-MM-DD (default: today in PORTAL_TIME_ZONE)")
        parser.add_argument(
            "--full",
            action="store_true",
            help="aggregate every session again from its rows instead of reusing the kept per-session tallies",
        )

    def handle(self, *args, date=None, full=False, **options):
        try:
            day = datetime.date.fromisoformat(date) if date else timezone.localdate()
        except ValueError:
            raise CommandError(f"--date '{date}'는 YYYY-MM-DD 형식의 날짜여야 합니다.") from None
        # Waits for a running nightly job instead of overlapping it.
        with nightly_lock(wait_seconds=settings.NIGHTLY_REVIEW_LOCK_SECONDS) as acquired:
            if not acquired:
                raise CommandError("다른 야간 검토가 실행 중이라 끝나기를 기다리다 시간이 다 되었습니다.")
            if full:
                services.tallies_forget()
            results = nightly.nightly_review(day=day)
        gauge = next(r for r in results.values() if isinstance(r, services.GaugeRun))
        self.stdout.write(json.dumps(gauge.summary()))
