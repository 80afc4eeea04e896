"""Shapes of CONTRACT §6 (tendency tag) and the inputs of CONTRACT §5."""

from rest_framework import serializers

from supervision.tags.models import ContradictionSeverity, Source
from supervision.tags.services import MAX_EVENT_CHARS


class EvidenceOut(serializers.Serializer):
    session = serializers.IntegerField(source="session_id", allow_null=True)
    event = serializers.CharField()
    at = serializers.DateTimeField()


class ContradictionOut(serializers.Serializer):
    session = serializers.IntegerField(source="session_id", allow_null=True)
    event = serializers.CharField()
    severity = serializers.CharField()
    at = serializers.DateTimeField()


class TagOut(serializers.Serializer):
    tag = serializers.CharField()
    status = serializers.CharField()
    source = serializers.CharField()
    evidence = EvidenceOut(many=True)
    contradictions = ContradictionOut(many=True)
    verified_at = serializers.DateTimeField(allow_null=True)
    last_updated = serializers.DateTimeField()


class EvidenceIn(serializers.Serializer):
    tag = serializers.CharField(max_length=64)
    source = serializers.ChoiceField(choices=Source.choices)
    event = serializers.CharField(max_length=MAX_EVENT_CHARS)
    session = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2**63 - 1)


class ContradictionIn(serializers.Serializer):
    event = serializers.CharField(max_length=MAX_EVENT_CHARS)
    severity = serializers.ChoiceField(choices=ContradictionSeverity.choices)
    session = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2**63 - 1)
