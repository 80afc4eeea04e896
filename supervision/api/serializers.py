"""Shapes of CONTRACT §5/§6. Serializers validate and shape; writes go through ``supervision.commenting``."""

from __future__ import annotations

from django.core.validators import ProhibitNullCharactersValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.validators import ProhibitSurrogateCharactersValidator

from supervision import commenting, rules
from supervision.models import CommentKind, Session, Severity, SupervisorComment
from taxonomy import catalogue

AUDITED_FIELDS = ("kind", "text", "intent_deviation")


class TokenRequestSerializer(AuthTokenSerializer):
    # Bounded so that a huge body cannot make the password hasher the bottleneck.
    username = serializers.CharField(label="아이디", max_length=150, write_only=True)
    password = serializers.CharField(
        label="비밀번호", max_length=4096, trim_whitespace=False, write_only=True, style={"input_type": "password"}
    )


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(read_only=True)


# --- taxonomy (built from the catalogue, in document order) ---------------------------------------


class CodeKoSerializer(serializers.Serializer):
    code = serializers.CharField()
    ko = serializers.CharField()


class StageSerializer(CodeKoSerializer):
    definition = serializers.CharField()


class SpeakerSerializer(CodeKoSerializer):
    letter = serializers.CharField()


class TechniqueSerializer(CodeKoSerializer):
    category = serializers.CharField()
    definition = serializers.CharField()
    since = serializers.CharField()


class ClientStateSerializer(CodeKoSerializer):
    definition = serializers.CharField()
    safety_critical = serializers.BooleanField()
    since = serializers.CharField()


class CommentKindSerializer(CodeKoSerializer):
    definition = serializers.CharField()


class DialogActSerializer(CodeKoSerializer):
    closing_ack = serializers.BooleanField()


class TaxonomySerializer(serializers.Serializer):
    version = serializers.CharField()
    stages = StageSerializer(many=True)
    speakers = SpeakerSerializer(many=True)
    technique_categories = CodeKoSerializer(many=True)
    techniques = TechniqueSerializer(many=True)
    client_states = ClientStateSerializer(many=True)
    comment_kinds = CommentKindSerializer(many=True)
    dialog_acts = DialogActSerializer(many=True)

    @staticmethod
    def catalogue_data() -> dict:
        return {
            "version": catalogue.TAXONOMY_VERSION,
            "stages": catalogue.STAGES,
            "speakers": catalogue.SPEAKERS,
            "technique_categories": catalogue.CATEGORIES,
            "techniques": catalogue.TECHNIQUES,
            "client_states": catalogue.CLIENT_STATES,
            "comment_kinds": catalogue.COMMENT_KINDS,
            "dialog_acts": catalogue.DIALOG_ACTS,
        }


# --- comments -------------------------------------------------------------------------------------


class IntentDeviationSchema(serializers.Serializer):
    """For the OpenAPI document only; validation is ``supervision.rules.intent_deviation_problems``."""

    dimension = serializers.CharField(required=False, max_length=rules.MAX_SHORT_FIELD)
    expected = serializers.CharField(
        required=False, max_length=rules.MAX_SHORT_FIELD, help_text="기법 코드 또는 자유 서술"
    )
    actual = serializers.CharField(
        required=False, max_length=rules.MAX_SHORT_FIELD, help_text="기법 코드 또는 자유 서술"
    )
    severity = serializers.ChoiceField(required=False, choices=Severity.choices)


_text_validators = (ProhibitNullCharactersValidator(), ProhibitSurrogateCharactersValidator())


@extend_schema_field(IntentDeviationSchema)
class IntentDeviationField(serializers.Field):
    """A critique's ``{"dimension","expected","actual","severity"}``, checked by the shared rules."""

    default_error_messages = {"invalid": "의도 이탈은 객체여야 합니다."}

    def to_internal_value(self, data):
        problems = rules.intent_deviation_problems(data)
        if problems:
            raise serializers.ValidationError({key: [message] for key, message in problems})
        for value in (data or {}).values():
            if isinstance(value, str):
                for validator in _text_validators:
                    validator(value)
        return dict(data or {})

    def to_representation(self, value):
        return value or {}


class CommentSerializer(serializers.ModelSerializer):
    kind = serializers.ChoiceField(choices=CommentKind.choices)
    text = serializers.CharField()
    intent_deviation = IntentDeviationField(required=False)

    def validate_text(self, value: str) -> str:
        if problem := commenting.comment_text_problem(value):
            raise serializers.ValidationError(problem)
        return value

    class Meta:
        model = SupervisorComment
        fields = (
            "id",
            "turn",
            "kind",
            "text",
            "intent_deviation",
            "author",
            "written_by",
            "is_suggestion",
            "created_at",
            "updated_at",
        )
        read_only_fields = ("author", "written_by", "is_suggestion", "created_at", "updated_at")


class CommentCreateSerializer(CommentSerializer):
    """``turn`` must be a turn the user can see; anything else reads as 'does not exist' (no leak)."""

    def __init__(self, *args, turns=None, **kwargs):
        super().__init__(*args, **kwargs)
        if turns is not None:
            self.fields["turn"].queryset = turns


class CommentUpdateSerializer(CommentSerializer):
    class Meta(CommentSerializer.Meta):
        read_only_fields = (*CommentSerializer.Meta.read_only_fields, "turn")


class HistoryUserSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()


class FieldChangeSerializer(serializers.Serializer):
    before = serializers.JSONField(allow_null=True)
    after = serializers.JSONField(allow_null=True)


class ChangeSetSerializer(serializers.Serializer):
    kind = FieldChangeSerializer(required=False)
    text = FieldChangeSerializer(required=False)
    intent_deviation = FieldChangeSerializer(required=False)


class HistoryEntrySerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    action = serializers.ChoiceField(choices=["created", "changed", "deleted"])
    by = HistoryUserSerializer(allow_null=True)
    changes = ChangeSetSerializer()


class CommentDetailSerializer(CommentSerializer):
    """A comment with its audit trail: who changed what, when, before and after."""

    history = serializers.SerializerMethodField()

    class Meta(CommentSerializer.Meta):
        fields = (*CommentSerializer.Meta.fields, "history")

    @extend_schema_field(HistoryEntrySerializer(many=True))
    def get_history(self, obj) -> list[dict]:
        records = self.context.get("history", [])
        return [_history_entry(previous, record) for previous, record in zip([None, *records], records, strict=False)]


_ACTIONS = {"+": "created", "~": "changed", "-": "deleted"}


def _history_entry(previous, record) -> dict:
    changes = {}
    for field in AUDITED_FIELDS:
        before = getattr(previous, field) if previous is not None else None
        after = getattr(record, field)
        if before != after:
            changes[field] = {"before": before, "after": after}
    user = record.history_user
    return {
        "at": record.history_date,
        "action": _ACTIONS.get(record.history_type, "changed"),
        "by": {"id": user.pk, "username": user.username} if user is not None else None,
        "changes": changes,
    }


# --- sessions -------------------------------------------------------------------------------------


class SessionSerializer(serializers.ModelSerializer):
    trainee_username = serializers.CharField(source="trainee.username", read_only=True, allow_null=True, default=None)
    turn_count = serializers.IntegerField(read_only=True)
    critique_count = serializers.IntegerField(read_only=True, help_text="승인된 논평(critique) 수")

    class Meta:
        model = Session
        fields = (
            "id",
            "code",
            "title",
            "trainee",
            "trainee_username",
            "held_on",
            "source",
            "taxonomy_version",
            "turn_count",
            "critique_count",
        )
        read_only_fields = fields


class TurnCommentSerializer(serializers.Serializer):
    """A comment as it appears inside a turn (the §2 comment plus its id and writer)."""

    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=CommentKind.choices)
    text = serializers.CharField()
    author = serializers.CharField()
    intent_deviation = IntentDeviationField()
    written_by = serializers.IntegerField(source="written_by_id", allow_null=True)
    is_suggestion = serializers.BooleanField()


class TurnSerializer(serializers.Serializer):
    """A turn: the golden-line fields of CONTRACT §2 plus ``id`` and the comments the viewer may see.

    ``to_representation`` is written out by hand: a 500-turn session goes through it in one request and
    the generic field machinery costs several times more (see benchmarks/bench_api.py).
    """

    id = serializers.IntegerField()
    utterance_id = serializers.CharField()
    speaker = serializers.ChoiceField(choices=catalogue.SPEAKER_CODES)
    stage = serializers.ChoiceField(choices=catalogue.STAGE_CODES)
    seq = serializers.IntegerField()
    text = serializers.CharField()
    techniques = serializers.ListField(child=serializers.CharField())
    client_states = serializers.ListField(child=serializers.CharField())
    nonverbal = serializers.ListField(child=serializers.CharField())
    dialog_act = serializers.ChoiceField(choices=catalogue.DIALOG_ACT_CODES, allow_null=True)
    source = serializers.CharField(help_text="출처(합성 표기): the session's provenance, as on its golden lines")
    session = serializers.CharField(help_text="회기 코드")
    comments = TurnCommentSerializer(many=True)

    def to_representation(self, turn) -> dict:
        return {
            "id": turn.id,
            "utterance_id": turn.utterance_id,
            "speaker": turn.speaker,
            "stage": turn.stage_id,
            "seq": turn.seq,
            "text": turn.text,
            "techniques": [link.label.code for link in turn.technique_links.all()],
            "client_states": [link.label.code for link in turn.client_state_links.all()],
            "nonverbal": turn.nonverbal or [],
            "dialog_act": turn.dialog_act,
            # the prefetch of a session's turns caches the session on each turn: no query per turn
            "source": turn.session.source,
            "session": turn.session.code,
            "comments": [
                {
                    "id": c.id,
                    "kind": c.kind,
                    "text": c.text,
                    "author": c.author,
                    "intent_deviation": c.intent_deviation or {},
                    "written_by": c.written_by_id,
                    "is_suggestion": c.is_suggestion,
                }
                for c in turn.comments.all()
            ],
        }


class SessionDetailSerializer(SessionSerializer):
    turns = TurnSerializer(many=True, read_only=True)

    class Meta(SessionSerializer.Meta):
        fields = (*SessionSerializer.Meta.fields, "turns")
        read_only_fields = fields


class TrajectoryPointSerializer(serializers.Serializer):
    seq = serializers.IntegerField()
    utterance_id = serializers.CharField()
    valence = serializers.FloatField()
    arousal = serializers.FloatField()
    risk = serializers.FloatField()


class TrajectoryWindowSerializer(serializers.Serializer):
    window_index = serializers.IntegerField()
    first_seq = serializers.IntegerField()
    last_seq = serializers.IntegerField()
    label = serializers.ChoiceField(choices=["productive", "neutral", "harmful"])
    score = serializers.FloatField()
    explanation = serializers.CharField()
    sycophancy_turns = serializers.ListField(child=serializers.CharField())
    trace = TrajectoryPointSerializer(many=True)
    risk_threshold = serializers.FloatField()


class TrajectorySerializer(serializers.Serializer):
    """A session's stored trajectory audit. ``labels``: what it read (CONTRACT §9) — ``given`` or, in a
    session with no technique or client-state label, ``suggested`` (the AI's estimated labels); ``null``
    before its first audit. ``pending``: its turns or labels changed since (a new audit is queued)."""

    session = serializers.IntegerField()
    labels = serializers.ChoiceField(choices=["given", "suggested"], allow_null=True)
    pending = serializers.BooleanField()
    windows = TrajectoryWindowSerializer(many=True)
