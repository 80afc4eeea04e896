from django.core.management.base import BaseCommand, CommandError

from supervision.people.services import portal_user_create_or_update
from supervision.roles import Role
from supervision.services import ServiceError


class Command(BaseCommand):
    help = "Create or update a portal user with a role (idempotent; never a superuser's account)."

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
            problems = getattr(exc, "problems", None) or {exc.field or "username": [str(exc)]}
            raise CommandError(
                " ".join(f"{field}: {' '.join(messages)}" for field, messages in problems.items())
            ) from exc
        self.stdout.write(f"{user.username}: {role}")
