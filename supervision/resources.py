"""django-import-export resources of the admin: the roster (import) and the supervisors' spreadsheet exports.

Writes go through the services (the roster through ``portal_user_create``, the one create-only path for
people); exports read the admin's change list, so they carry its role scoping and its filters.
"""

from __future__ import annotations

from collections import Counter

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from import_export import fields, resources

from portal.tabular import AllOrNothingMixin, FormulaSafeMixin, PortalModelResource, row_label
from supervision.gauge.models import GaugeSnapshot
from supervision.models import SupervisorComment
from supervision.people.services import PersonRefused, normalize_username, portal_user_create, portal_user_problems
from supervision.roles import Role
from supervision.tags.models import TraineeTag

ROSTER_COLUMNS = ("username", "role", "supervisor", "initial_password")
ROSTER_COLUMN_LABELS = {
    "username": "사용자 이름",
    "role": "역할",
    "supervisor": "슈퍼바이저",
    "initial_password": "초기 비밀번호",
}


def _cell(row, column: str) -> str:
    value = row.get(column)
    return "" if value is None else str(value).strip()


class RosterResource(AllOrNothingMixin, FormulaSafeMixin, resources.ModelResource):
    """A cohort of new users, one a row: ``username``, ``role`` (supervisor|trainee|staff), ``supervisor``
    (a trainee's supervisor, by username) and ``initial_password``.

    Create-only: every row goes through ``portal_user_create``, which normalises the username and refuses
    any existing account compared case-insensitively — the roster can never update a password, a role or an
    assignment. A row's every problem is reported at once, on the column it concerns; a password is never
    shown back (the preview says only whether one is set). A blank ``initial_password`` leaves the account
    without a usable password (no log-in until staff set one).
    """

    # what the preview shows of each row (never the password itself)
    role = fields.Field(column_name="role", attribute="roster_role")
    supervisor = fields.Field(column_name="supervisor", attribute="roster_supervisor")
    initial_password = fields.Field(column_name="initial_password", attribute="roster_password_policy")
    column_labels = ROSTER_COLUMN_LABELS

    class Meta:
        model = get_user_model()
        fields = ("username", "role", "supervisor", "initial_password")
        import_id_fields = ("username",)
        skip_unchanged = False

    @staticmethod
    def import_summary(result) -> str:
        """The confirm step's message: people made, by role (a new supervisor is not an assignment)."""
        made = Counter(getattr(row.instance, "roster_role", "") for row in result.valid_rows())
        by_role = ", ".join(f"{Role(role).label} {made[role]}명" for role in Role.values if made[role])
        return f"가져오기를 마쳤습니다: 사용자 {sum(made.values())}명을 만들었습니다({by_role})."

    def before_import(self, dataset, **kwargs):
        self._seen: dict[str, str] = {}
        headers = [str(h).strip() for h in (dataset.headers or [])]
        dataset.headers = headers
        missing = [c for c in ("username", "role") if c not in headers]
        if missing:
            raise ValidationError(
                f"1행(머리글): 필수 열 {', '.join(missing)}이(가) 없습니다. 열: {', '.join(ROSTER_COLUMNS)}"
            )

    def before_import_row(self, row, **kwargs):
        # The library looks the row up by this cell before we see it: it must see the name the service will.
        row["username"] = normalize_username(row.get("username"))

    def get_instance(self, instance_loader, row):
        # Every row is a new account; whether one exists already is the service's decision (case-insensitive).
        return None

    def import_instance(self, instance, row, **kwargs):
        n = row_label(kwargs["row_number"])
        username = row["username"]
        problems = portal_user_problems(
            username=username,
            role=_cell(row, "role"),
            supervisor_username=_cell(row, "supervisor") or None,
            password=_cell(row, "initial_password") or None,
            creating=True,
        )
        key = username.upper()
        if username and key in self._seen:
            problems["username"] = [f"'{username}'이(가) {self._seen[key]}에도 있습니다(중복, 대소문자 구별 없음)."]
        self._seen.setdefault(key, n)
        if problems:
            raise ValidationError(
                {field: [f"{n} {field}: {message}" for message in messages] for field, messages in problems.items()}
            )
        instance.username = username
        instance.roster_role, instance.roster_supervisor = _cell(row, "role"), _cell(row, "supervisor")
        instance.roster_password_policy = "(설정됨)" if _cell(row, "initial_password") else "(없음: 로그인 불가)"

    def save_instance(self, instance, is_create, row, **kwargs):
        n = row_label(kwargs["row_number"])
        try:
            user = portal_user_create(
                username=row["username"],
                role=_cell(row, "role"),
                password=_cell(row, "initial_password") or None,
                supervisor_username=_cell(row, "supervisor") or None,
                by=kwargs.get("user"),
            )
        except PersonRefused as exc:
            raise ValidationError(
                {field: [f"{n} {field}: {message}" for message in messages] for field, messages in exc.problems.items()}
            ) from None
        # the row's preview names the user but links nowhere: this admin's change pages are assignments
        instance.roster_user_id = user.pk


class CommentResource(PortalModelResource):
    """Supervisor comments and critiques with their intent-deviation fields (export only)."""

    session = fields.Field(column_name="session", attribute="turn__session__code")
    trainee = fields.Field(column_name="trainee", attribute="turn__session__trainee__username")
    utterance_id = fields.Field(column_name="utterance_id", attribute="turn__utterance_id")
    written_by = fields.Field(column_name="written_by", attribute="written_by__username")
    dimension = fields.Field(column_name="dimension")
    expected = fields.Field(column_name="expected")
    actual = fields.Field(column_name="actual")
    severity = fields.Field(column_name="severity")
    column_labels = {
        "session": "회기",
        "trainee": "수련생",
        "utterance_id": "발화 ID",
        "dimension": "평가 차원",
        "expected": "권장 기법",
        "actual": "실제 기법",
        "severity": "심각도",
    }

    class Meta:
        model = SupervisorComment
        fields = (
            "id",
            "trainee",
            "session",
            "utterance_id",
            "kind",
            "text",
            "dimension",
            "expected",
            "actual",
            "severity",
            "author",
            "written_by",
            "created_at",
            "updated_at",
        )
        export_order = fields

    def _deviation(self, comment, key: str) -> str:
        return str((comment.intent_deviation or {}).get(key) or "")

    def dehydrate_dimension(self, comment):
        return self._deviation(comment, "dimension")

    def dehydrate_expected(self, comment):
        return self._deviation(comment, "expected")

    def dehydrate_actual(self, comment):
        return self._deviation(comment, "actual")

    def dehydrate_severity(self, comment):
        return self._deviation(comment, "severity")


class GaugeSnapshotResource(PortalModelResource):
    """Review-gauge snapshots as a flat sheet: one column per category share and status (export only)."""

    trainee = fields.Field(column_name="trainee", attribute="trainee__username")
    session = fields.Field(column_name="session", attribute="session__code")

    class Meta:
        model = GaugeSnapshot
        fields = (
            "date",
            "trainee",
            "session",
            "sessions",
            "turns",
            "counselor_turns",
            "technique_labels",
            "reflections",
            "questions",
            "rq_ratio",
            "rq_band",
            "intent_deviation_rate",
            "silent_close_events",
            "closing_acknowledged",
            "closed_on_resuming_client",
        )
        export_order = fields

    def get_export_headers(self, selected_fields=None):
        from taxonomy import catalogue

        headers = super().get_export_headers(selected_fields)
        for code in catalogue.CATEGORY_CODES:
            headers += [f"{code}_share", f"{code}_status"]
        return headers + [f"critiques_{s}" for s in catalogue.CRITIQUE_SEVERITIES]

    def export_resource(self, instance, selected_fields=None, **kwargs):
        from taxonomy import catalogue

        row = super().export_resource(instance, selected_fields, **kwargs)
        for code in catalogue.CATEGORY_CODES:
            entry = (instance.categories or {}).get(code) or {}
            row += [entry.get("share"), entry.get("status") or ""]
        return row + [(instance.critiques or {}).get(s, 0) for s in catalogue.CRITIQUE_SEVERITIES]


class TraineeTagResource(PortalModelResource):
    """Tendency tags with their evidence and contradiction counts (export only)."""

    trainee = fields.Field(column_name="trainee", attribute="trainee__username")
    evidence = fields.Field(column_name="evidence")
    contradictions = fields.Field(column_name="contradictions")
    column_labels = {"evidence": "근거 수", "contradictions": "반증 수"}

    class Meta:
        model = TraineeTag
        fields = ("trainee", "tag", "source", "status", "evidence", "contradictions", "verified_at", "last_updated")
        export_order = fields

    def dehydrate_evidence(self, tag):
        return getattr(tag, "evidence_total", None) if hasattr(tag, "evidence_total") else tag.evidence.count()

    def dehydrate_contradictions(self, tag):
        total = getattr(tag, "contradiction_total", None)
        return total if total is not None else tag.contradictions.count()
