"""``/api/v1/annotation-runs/`` (CONTRACT §7): the runs and their agreement with the golden set, over the
turns the viewer may see. Staff and superusers see everything, supervisors their trainees' turns, and a
trainee gets 403."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from supervision.api.permissions import IsAuthenticated, IsStaffOrSuperuser, IsSupervisor

from . import selectors, services
from .models import AnnotationRun

RUN_READ = IsAuthenticated & (IsStaffOrSuperuser | IsSupervisor)


class AnnotationRunSerializer(serializers.ModelSerializer):
    # A plain string in the schema: a second enum field named "kind" (comments have one) would make
    # drf-spectacular warn about the collision, and the deploy check treats warnings as issues.
    kind = serializers.CharField(read_only=True, help_text="ai 또는 human")
    turns = serializers.IntegerField(
        source="turn_count", read_only=True, help_text="보는 사람이 볼 수 있는 평가 발화 수"
    )

    class Meta:
        model = AnnotationRun
        fields = ("id", "rater", "kind", "created_at", "turns")


@extend_schema_view(list=extend_schema(summary="주석 실행 목록(평가 AI·두 번째 주석자)"))
class AnnotationRunViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    title_ko = "주석 실행"
    permission_classes = (RUN_READ,)
    serializer_class = AnnotationRunSerializer
    lookup_value_regex = "[0-9]+"
    filter_backends = ()

    def get_queryset(self):
        return selectors.runs_visible(self.request.user)

    @extend_schema(
        summary="골든 세트와의 일치도(CONTRACT §7)",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="§7의 JSON, 볼 수 있는 발화만으로 계산")},
    )
    @action(detail=True, pagination_class=None)
    def agreement(self, request, pk=None):
        run = self.get_object()
        return Response(services.score_run(run, user=request.user))
