"""The review-gauge snapshot exactly as CONTRACT.md §6 shows it (no more keys, no fewer)."""

from rest_framework import serializers

from supervision.gauge.models import GaugeSnapshot
from taxonomy import catalogue


def _in_order(mapping: dict, order: tuple[str, ...]) -> dict:
    # jsonb keeps keys sorted by length; the API lists them in catalogue order.
    return {key: mapping[key] for key in order if key in mapping}


class DialogActsSerializer(serializers.Serializer):
    silent_close_events = serializers.IntegerField()
    closing_acknowledged = serializers.IntegerField()
    closed_on_resuming_client = serializers.IntegerField()


class GaugeSnapshotSerializer(serializers.ModelSerializer):
    trainee = serializers.IntegerField(source="trainee_id")
    session = serializers.IntegerField(source="session_id", allow_null=True)
    rq_band = serializers.SerializerMethodField()
    dialog_acts = DialogActsSerializer(source="*")

    class Meta:
        model = GaugeSnapshot
        fields = (
            "trainee",
            "date",
            "session",
            "turns",
            "counselor_turns",
            "categories",
            "techniques",
            "rq_ratio",
            "rq_band",
            "critiques",
            "intent_deviation_rate",
            "dialog_acts",
            "client_state_transitions",
            "safety",
        )
        read_only_fields = fields

    def get_rq_band(self, obj) -> str | None:
        return obj.rq_band or None

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["categories"] = _in_order(data["categories"], catalogue.CATEGORY_CODES)
        data["techniques"] = _in_order(data["techniques"], catalogue.TECHNIQUE_CODES)
        data["critiques"] = _in_order(data["critiques"], catalogue.CRITIQUE_SEVERITIES)
        return data


class GaugeSnapshotListSerializer(GaugeSnapshotSerializer):
    """The API's shape: the snapshot plus the trainee's username (the list selects the trainee along)."""

    trainee_username = serializers.CharField(source="trainee.username", read_only=True)

    class Meta(GaugeSnapshotSerializer.Meta):
        fields = ("trainee_username", *GaugeSnapshotSerializer.Meta.fields)
