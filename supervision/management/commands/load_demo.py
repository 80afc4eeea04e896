from django.core.management.base import BaseCommand

from supervision.demo import DEMO_PASSWORD, DEMO_USERS, load_demo


class Command(BaseCommand):
    help = "Create the demo users and load the demo sessions (idempotent)."

    def handle(self, *args, **options):
        reports = load_demo()
        turns = sum(r.turns for r in reports)
        self.stdout.write(f"demo: {len(reports)} sessions, {turns} turns")
        self.stdout.write(f"demo log-ins (password for all: {DEMO_PASSWORD}):")
        for username, role, _ in DEMO_USERS:
            self.stdout.write(f"  {username:<16} {role}")
