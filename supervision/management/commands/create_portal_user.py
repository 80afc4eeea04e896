from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
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
        if password:
            # Django's validators, with the role the user is about to have (12 characters but for trainees).
            candidate = get_user_model()(username=username, is_staff=role != Role.TRAINEE)
            candidate._portal_roles = frozenset({role})
            try:
                validate_password(password, candidate)
            except ValidationError as exc:
                raise CommandError(" ".join(exc.messages)) from exc
        try:
            user = portal_user_create_or_update(
                username=username, role=role, password=password, supervisor_username=supervisor
            )
        except ServiceError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{user.username}: {role}")
