"""The safety event exactly as CONTRACT §8 shows it, and the inputs of its endpoints."""

from rest_framework import serializers

from supervision.safety.services import MAX_NOTE_CHARS


class SafetyEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    session = serializers.IntegerField(source="session_id")
    session_code = serializers.CharField()
    utterance_id = serializers.CharField()
    state = serializers.CharField()
    answered = serializers.BooleanField()
    answered_by = serializers.CharField(allow_null=True)
    latency = serializers.IntegerField(allow_null=True, min_value=1)
    reviewed = serializers.BooleanField()
    reviewed_by = serializers.IntegerField(allow_null=True, help_text="검토한 슈퍼바이저의 사용자 id")
    reviewed_at = serializers.DateTimeField(allow_null=True)
    note = serializers.CharField(allow_null=True)
    source = serializers.SerializerMethodField(
        help_text="golden: 사람이 붙인 라벨의 사건 · suggested: 라벨 없는 회기에서 AI 추정 라벨로 찾은 사건(CONTRACT §9)"
    )

    def get_source(self, event) -> str:
        return getattr(event, "source", "golden")


class ReviewIn(serializers.Serializer):
    note = serializers.CharField(
        max_length=MAX_NOTE_CHARS,
        allow_blank=True,
        trim_whitespace=True,
        error_messages={
            "required": "검토 메모(note)를 보내 주세요(비워 둘 수는 있습니다).",
            "invalid": "검토 메모(note)는 문자열이어야 합니다.",
        },
    )
