"""``/api/v1/transitions/`` and ``/api/v1/persona-runs/`` (CONTRACT §10). Staff and superusers read the table
over every golden session, supervisors over their trainees'; saved persona runs are for both; a trainee
gets 403 on all three."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from supervision.api.permissions import IsAuthenticated, IsStaffOrSuperuser, IsSupervisor

from . import counting, selectors, services
from .models import PersonaRun

TRANSITIONS_READ = IsAuthenticated & (IsStaffOrSuperuser | IsSupervisor)


class ByQuery(serializers.Serializer):
    by = serializers.ChoiceField(choices=counting.BY_CHOICES, default=counting.BY_CATEGORY, required=False)


class TransitionTableView(APIView):
    title_ko = "상태 전이 표"
    permission_classes = (TRANSITIONS_READ,)

    @extend_schema(
        summary="상태 전이표: P(다음 내담자 상태 | 상태, 상담자 개입) (CONTRACT §10)",
        parameters=[
            OpenApiParameter(
                "by", OpenApiTypes.STR, enum=list(counting.BY_CHOICES), description="category(기본) 또는 technique"
            )
        ],
        responses={
            200: OpenApiResponse(
                OpenApiTypes.OBJECT,
                description="transition_table의 JSON(볼 수 있는 골든 회기만), 맥락마다 95 % Wilson 구간 intervals 포함",
            )
        },
    )
    def get(self, request):
        query = ByQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(services.transition_table(by=query.validated_data["by"], user=request.user))


class PersonaRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = PersonaRun
        fields = ("id", "rater", "created_at", "jsd", "coverage", "contexts")


@extend_schema_view(
    list=extend_schema(summary="저장된 페르소나 실행 목록"),
    retrieve=extend_schema(
        summary="페르소나 실행의 score_persona 결과",
        responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="저장된 score_persona JSON(CONTRACT §10)")},
    ),
)
class PersonaRunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    title_ko = "페르소나 실행"
    permission_classes = (TRANSITIONS_READ,)
    serializer_class = PersonaRunSerializer
    lookup_value_regex = "[0-9]+"
    filter_backends = ()

    def get_queryset(self):
        runs = selectors.persona_runs_visible(self.request.user)
        # The list never reads the kept counts and figures (tens of kilobytes a run).
        return runs.defer("figures", "golden_counts", "persona_counts") if self.action == "list" else runs

    def retrieve(self, request, pk=None):
        return Response(self.get_object().figures)
