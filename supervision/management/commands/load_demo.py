from django.core.management.base import BaseCommand

from supervision.demo import DEMO_PASSWORD, DEMO_USERS, load_demo
from supervision.gauge.services import gauge_available


class Command(BaseCommand):
    help = "Create the demo users and load the demo sessions (idempotent)."

    def handle(self, *args, **options):
        reports = load_demo()
        turns = sum(r.turns for r in reports)
        self.stdout.write(f"demo: {len(reports)} sessions, {turns} turns")
        if not gauge_available():
            self.stdout.write(
                "note: 검토 지표와 경향 태그는 PostgreSQL에서 계산됩니다 (review gauge and tags need PostgreSQL: "
                "set DATABASE_URL). 궤적 감사는 계산했습니다."
            )
        self.stdout.write(f"demo log-ins (password for all: {DEMO_PASSWORD}):")
        for username, role, _ in DEMO_USERS:
            self.stdout.write(f"  {username:<16} {role}")
