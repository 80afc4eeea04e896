from django.core.management.base import BaseCommand, CommandError

from supervision.roles import Role
from supervision.services import ServiceError, portal_user_create_or_update


class Command(BaseCommand):
    help = "Create or update a portal user with a role (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--password")
        parser.add_argument("--supervisor", help="username of the supervisor a trainee is assigned to")

    def handle(self, *args, username, role, password, supervisor, **options):
        try:
            user = portal_user_create_or_update(
                username=username, role=role, password=password, supervisor_username=supervisor
            )
        except ServiceError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{user.username}: {role}")
