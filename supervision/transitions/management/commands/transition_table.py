import json

from django.core.management.base import BaseCommand

from supervision.transitions import counting, services


class Command(BaseCommand):
    help = "P(next client state | client state, counselor move) over the golden sessions (CONTRACT §10)."

    def add_arguments(self, parser):
        parser.add_argument("--by", choices=counting.BY_CHOICES, default=counting.BY_CATEGORY)
        parser.add_argument("--trainee", action="append", default=[], help="a trainee's username (repeatable)")

    def handle(self, *args, by, trainee, **options):
        table = services.transition_table(by=by, trainees=trainee)
        self.stdout.write(json.dumps(table, ensure_ascii=False))
