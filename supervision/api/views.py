"""API views: validate input, call a selector or a service, shape the output. Nothing else."""

from __future__ import annotations

import django_filters
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, renderers, status, viewsets
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.generics import get_object_or_404
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from supervision import pagecache, selectors
from supervision.api import permissions
from supervision.api.filters import TraineeFilter
from supervision.api.serializers import (
    CommentCreateSerializer,
    CommentDetailSerializer,
    CommentSerializer,
    CommentUpdateSerializer,
    SessionDetailSerializer,
    SessionSerializer,
    TaxonomySerializer,
    TokenRequestSerializer,
    TokenSerializer,
    TrajectorySerializer,
)
from supervision.api.tokens import api_token_issue, api_token_revoke
from supervision.commenting import (
    CommentRejected,
    supervisor_comment_create,
    supervisor_comment_delete,
    supervisor_comment_update,
)
from supervision.exporting import golden_jsonl
from supervision.trajectory import selectors as trajectory_selectors


@extend_schema(
    summary="토큰 발급",
    request=TokenRequestSerializer,
    responses={200: TokenSerializer, 400: OpenApiResponse(description="아이디 또는 비밀번호 오류")},
    auth=[],
)
class TokenView(ObtainAuthToken):
    """``{"username","password"}`` → ``{"token"}``; throttled per client address against password guessing.

    The token lasts ``API_TOKEN_TTL_HOURS``; logging in again hands back the same one until it expires.
    """

    title_ko = "API 토큰 발급"

    serializer_class = TokenRequestSerializer
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES
    throttle_classes = (ScopedRateThrottle,)
    throttle_scope = "auth_token"

    def post(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token = api_token_issue(user=serializer.validated_data["user"])
        return Response({"token": token.key})


@extend_schema(summary="토큰 폐기(로그아웃)", request=None, responses={204: None})
class LogoutView(APIView):
    """Revokes the caller's API token (and, logged in by session, the token issued to them)."""

    title_ko = "로그아웃(토큰 폐기)"

    permission_classes = (permissions.IsAuthenticated,)

    def post(self, request):
        api_token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ApiRootView(APIView):
    """/api/v1/: where each part of the API lives, for a person exploring it in the browser (DRF's
    DefaultRouter root lists only the router's viewsets; most routes here are plain paths)."""

    title_ko = "API v1"
    description_ko = "이 API의 주소 목록입니다. {id} 자리에 회기·수련생·사건 번호를 넣어 엽니다."
    permission_classes = (permissions.READ,)

    # (name, route name) for addresses without parameters; (name, path under /api/v1/) for the rest.
    LISTED = (
        ("라벨 분류 체계", "api:taxonomy"),
        ("회기", "api:session-list"),
        ("논평", "api:comment-list"),
        ("검토 지표", "api:gauge-list"),
        ("안전 사건", "api:safety-event-list"),
        ("주석 실행(annotation runs)", "api:annotation-run-list"),
        ("페르소나 실행(persona runs)", "api:persona-run-list"),
        ("상태 전이 표", "api:transitions"),
    )
    TEMPLATED = (
        ("회기의 골든 라벨(JSONL)", "sessions/{id}/golden/"),
        ("회기의 궤적 감사", "sessions/{id}/trajectory/"),
        ("수련생의 경향 태그", "trainees/{id}/tags/"),
        ("두 관점이 엇갈리는 경향 태그", "trainees/{id}/tags/conflicted/"),
        ("안전 사건 검토(POST)", "safety-events/{id}/review/"),
    )

    @extend_schema(exclude=True)
    def get(self, request):
        links = {name: request.build_absolute_uri(reverse(route)) for name, route in self.LISTED}
        base = request.build_absolute_uri(reverse("api:root"))
        links |= {name: base + path for name, path in self.TEMPLATED}
        links |= {
            "OpenAPI 스키마": request.build_absolute_uri(reverse("api-schema")),
            "API 문서": request.build_absolute_uri(reverse("api-docs")),
        }
        return Response(links)


class TaxonomyView(APIView):
    title_ko = "라벨 분류 체계"
    permission_classes = (permissions.READ,)

    @extend_schema(summary="분류 체계(문서 순서)", responses=TaxonomySerializer)
    def get(self, request):
        return Response(TaxonomySerializer(TaxonomySerializer.catalogue_data()).data)


class SessionFilter(django_filters.FilterSet):
    trainee = TraineeFilter()


class NDJSONRenderer(renderers.BaseRenderer):
    """One JSON object per line; an error body is a single line too."""

    media_type = "application/x-ndjson"
    format = "ndjson"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if isinstance(data, str):
            return data.encode("utf-8")
        return renderers.JSONRenderer().render(data) + b"\n"


@extend_schema_view(
    list=extend_schema(summary="회기 목록", description="`?trainee=<수련생 id>`로 거를 수 있습니다."),
    retrieve=extend_schema(summary="회기 상세(발화·라벨·논평)"),
)
class SessionViewSet(viewsets.ReadOnlyModelViewSet):
    title_ko = "회기"
    permission_classes = (permissions.READ,)
    lookup_value_regex = "[0-9]+"
    filterset_class = SessionFilter

    def get_queryset(self):
        if self.action == "retrieve":
            return selectors.session_detail(self.request.user)
        return selectors.session_list(self.request.user)

    def get_serializer_class(self):
        return SessionDetailSerializer if self.action == "retrieve" else SessionSerializer

    def list(self, request, *args, **kwargs):
        if not pagecache.kept_for(request.user):
            return super().list(request, *args, **kwargs)
        # A trainee's own list is kept until one of the writes it shows (supervision/pagecache.py). The whole
        # address is part of the key: the page links (next, previous) are absolute.
        data = pagecache.cached(
            request.user,
            request.user.pk,
            ("api-sessions", request.build_absolute_uri()),
            lambda: super(SessionViewSet, self).list(request, *args, **kwargs).data,
        )
        return Response(data)

    def handle_exception(self, exc):
        # An error of the NDJSON endpoint is the API's JSON error body, sent as application/json (as the schema
        # documents it), not labelled as NDJSON.
        response = super().handle_exception(exc)
        if self.action == "golden":
            self.request.accepted_renderer = renderers.JSONRenderer()
            self.request.accepted_media_type = renderers.JSONRenderer.media_type
        return response

    @extend_schema(
        summary="회기의 궤적 감사 (창마다 판정·점수·설명; labels: given | suggested)",
        description=(
            "저장된 궤적 감사. 회기의 어느 발화에도 기법·내담자 상태 라벨이 없으면 AI 라벨 제안 모델이 추정한 "
            '라벨로 감사하고 `"labels": "suggested"`라고 밝힙니다(CONTRACT §9, 화면에는 「AI 추정 라벨 기준」). '
            "아직 감사하지 않은 회기는 `labels`가 null이고 `windows`가 비어 있습니다."
        ),
        responses={200: TrajectorySerializer},
        filters=False,
    )
    @action(detail=True, filterset_class=None, pagination_class=None)
    def trajectory(self, request, pk=None):
        session = get_object_or_404(selectors.golden_sessions(request.user), pk=pk)
        return Response(
            TrajectorySerializer(
                {
                    "session": session.pk,
                    "labels": trajectory_selectors.audit_labels(session),
                    "pending": trajectory_selectors.audit_pending(session),
                    "windows": trajectory_selectors.audits_for(session),
                }
            ).data
        )

    @extend_schema(
        summary="회기의 골든 주석 (NDJSON, CONTRACT §2)",
        responses={(200, "application/x-ndjson"): OpenApiTypes.STR},
        filters=False,
    )
    @action(detail=True, renderer_classes=[NDJSONRenderer, renderers.JSONRenderer], filterset_class=None)
    def golden(self, request, pk=None):
        session = get_object_or_404(selectors.golden_sessions(request.user), pk=pk)
        return HttpResponse("".join(golden_jsonl([session])), content_type="application/x-ndjson; charset=utf-8")


COMMENT_EXAMPLE = OpenApiExample(
    "논평",
    value={
        "turn": 1,
        "kind": "critique",
        "text": "탐색 단계에서 해석이 이릅니다.",
        "intent_deviation": {
            "dimension": "시기",
            "expected": "reflection",
            "actual": "interpretation",
            "severity": "minor",
        },
    },
    request_only=True,
)


@extend_schema_view(
    list=extend_schema(summary="논평 목록"),
    retrieve=extend_schema(summary="논평 상세(변경 이력 포함)"),
    create=extend_schema(
        summary="논평 작성(담당 슈퍼바이저)",
        request=CommentCreateSerializer,
        responses={201: CommentSerializer},
        examples=[COMMENT_EXAMPLE],
    ),
    partial_update=extend_schema(
        summary="논평 수정(작성자)", request=CommentUpdateSerializer, responses={200: CommentDetailSerializer}
    ),
    destroy=extend_schema(summary="논평 삭제(작성자)", responses={204: None}),
)
class CommentViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    title_ko = "논평"
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    lookup_value_regex = "[0-9]+"
    filterset_fields = ()
    permissions_by_action = {
        "create": permissions.COMMENT_WRITE,
        "partial_update": permissions.COMMENT_CHANGE,
        "destroy": permissions.COMMENT_CHANGE,
    }

    def get_permissions(self):
        return [self.permissions_by_action.get(self.action, permissions.READ)()]

    def get_queryset(self):
        if self.action == "list":
            return selectors.comment_list(self.request.user)
        return selectors.comment_detail(self.request.user)

    def get_serializer_class(self):
        return {
            "retrieve": CommentDetailSerializer,
            "create": CommentCreateSerializer,
            "partial_update": CommentUpdateSerializer,
        }.get(self.action, CommentSerializer)

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if self.action in ("retrieve", "partial_update") and getattr(self, "_comment", None) is not None:
            context["history"] = list(selectors.comment_history(self.request.user, self._comment))
        return context

    def get_object(self):
        self._comment = super().get_object()
        return self._comment

    def retrieve(self, request, *args, **kwargs):
        comment = self.get_object()
        return Response(self.get_serializer(comment).data)

    def create(self, request, *args, **kwargs):
        serializer = CommentCreateSerializer(
            data=request.data, turns=selectors.turns_visible(request.user), context=self.get_serializer_context()
        )
        serializer.is_valid(raise_exception=True)
        turn = serializer.validated_data["turn"]
        self.check_object_permissions(request, turn)
        with _rejections_as_400():
            comment = supervisor_comment_create(
                turn=turn,
                kind=serializer.validated_data["kind"],
                text=serializer.validated_data["text"],
                intent_deviation=serializer.validated_data.get("intent_deviation"),
                written_by=request.user,
            )
        return Response(CommentSerializer(comment).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request, *args, **kwargs):
        comment = self.get_object()
        serializer = CommentUpdateSerializer(comment, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        with _rejections_as_400():
            supervisor_comment_update(comment=comment, changed_by=request.user, **serializer.validated_data)
        return Response(CommentDetailSerializer(comment, context=self.get_serializer_context()).data)

    def destroy(self, request, *args, **kwargs):
        supervisor_comment_delete(comment=self.get_object(), deleted_by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class _rejections_as_400:
    """Turns a service's rule rejection into DRF's 400 with the fields named."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, CommentRejected):
            raise ValidationError(exc.problems) from exc
        return False
