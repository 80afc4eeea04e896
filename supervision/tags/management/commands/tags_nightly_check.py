import datetime
import json

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from supervision.tags.services import tags_nightly_check


class Command(BaseCommand):
    help = "가설 단계 태그 중 검증 조건을 채운 것을 검증 단계로 올립니다(야간 작업과 같은 서비스)."

    def add_arguments(self, parser):
        parser.add_argument("--date", help="YYYY-MM-DD (기본값: PORTAL_TIME_ZONE 기준 오늘)")

    def handle(self, *args, date=None, **options):
        try:
            day = datetime.date.fromisoformat(date) if date else timezone.localdate()
        except ValueError:
            raise CommandError(f"--date '{date}'는 YYYY-MM-DD 형식이어야 합니다.") from None
        self.stdout.write(json.dumps(tags_nightly_check(day=day)))
