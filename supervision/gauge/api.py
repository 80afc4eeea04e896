import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework import generics

from supervision.api.filters import TraineeFilter
from supervision.gauge.models import GaugeSnapshot
from supervision.gauge.selectors import snapshots_visible_to
from supervision.gauge.serializers import GaugeSnapshotListSerializer


class GaugeSnapshotFilter(django_filters.FilterSet):
    trainee = TraineeFilter()

    class Meta:
        model = GaugeSnapshot
        fields = ("trainee",)


@extend_schema(summary="검토 지표 스냅숏 목록")
class GaugeSnapshotList(generics.ListAPIView):
    """Review-gauge snapshots the user may see, newest first; ``?trainee=<id or username>`` narrows to one."""

    title_ko = "검토 지표 목록"

    serializer_class = GaugeSnapshotListSerializer
    filterset_class = GaugeSnapshotFilter

    def get_queryset(self):
        return snapshots_visible_to(self.request.user)
