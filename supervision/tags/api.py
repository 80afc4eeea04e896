"""HTTP API of the tendency tags (CONTRACT §5): validate, call a selector or a service, serialize.

Order of refusals: a trainee the caller may not see → 404; a write the caller's role may not make → 403;
bad input → 400 naming the field.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from supervision.api.permissions import READ, IsAuthenticated, IsTraineeThemself, SupervisesTrainee
from supervision.roles import supervises
from supervision.tags.models import Origin, Source, Status, TraineeTag
from supervision.tags.selectors import (
    DEFAULT_MIN_STATUS,
    tag_with_history,
    tags_active,
    tags_conflicted,
    visible_trainee,
)
from supervision.tags.serializers import ContradictionIn, EvidenceIn, TagOut
from supervision.tags.services import TagInputError, tag_contradiction_record, tag_definition, tag_evidence_add


def _requiring(permission, message: str):
    """A permission (composed with ``|``/``&`` in ``supervision.api.permissions``) refusing with ``message``."""
    instance = permission()
    instance.message = message
    return instance


def _as_validation_error(error: TagInputError) -> ValidationError:
    return ValidationError({error.field: [error.message]})


class TraineeTagsView(GenericAPIView):
    title_ko = "경향 태그"
    serializer_class = TagOut
    queryset = TraineeTag.objects.none()  # for the schema only: reads go through the role-aware selectors

    def get_permissions(self):
        if self.request.method == "POST":
            return [
                _requiring(
                    IsAuthenticated & (SupervisesTrainee | IsTraineeThemself),
                    "이 수련생의 태그에 근거를 더할 수 있는 사람은 담당 슈퍼바이저뿐입니다.",
                )
            ]
        return [READ()]

    @extend_schema(
        summary="수련생의 경향 태그 목록",
        parameters=[
            OpenApiParameter("min_status", str, enum=Status.values, description="기본값 hypothesis"),
        ],
        responses=TagOut(many=True),
    )
    def get(self, request, trainee_id: int):
        min_status = request.query_params.get("min_status", DEFAULT_MIN_STATUS)
        if min_status not in Status.values:
            raise ValidationError({"min_status": [f"min_status는 {', '.join(Status.values)} 중 하나입니다."]})
        queryset = tags_active(viewer=request.user, trainee_id=trainee_id, min_status=min_status)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(TagOut(page, many=True).data)

    @extend_schema(summary="경향 태그에 근거 추가", request=EvidenceIn, responses={201: TagOut, 200: TagOut})
    def post(self, request, trainee_id: int):
        self.check_object_permissions(request, visible_trainee(viewer=request.user, trainee_id=trainee_id))
        is_supervisor = supervises(request.user, trainee_id)
        data = EvidenceIn(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        if not is_supervisor and values["source"] != Source.DECLARED:
            raise PermissionDenied("수련생 본인은 스스로 밝힌 초점(source: declared)만 기록할 수 있습니다.")
        try:
            done = tag_evidence_add(
                trainee_id=trainee_id,
                tag=values["tag"],
                source=values["source"],
                event=values["event"],
                session_id=values.get("session"),
                origin=Origin.SUPERVISOR if is_supervisor else Origin.TRAINEE,
                recorded_by=request.user,
            )
        except TagInputError as error:
            raise _as_validation_error(error) from None
        return Response(
            _serialized(done.tag.pk), status=status.HTTP_201_CREATED if done.created else status.HTTP_200_OK
        )


class TraineeConflictedTagsView(GenericAPIView):
    title_ko = "두 관점이 엇갈리는 경향 태그"
    serializer_class = TagOut
    queryset = TraineeTag.objects.none()  # for the schema only: reads go through the role-aware selectors

    @extend_schema(summary="선언과 회기가 엇갈린 태그 목록", responses=TagOut(many=True))
    def get(self, request, trainee_id: int):
        queryset = tags_conflicted(viewer=request.user, trainee_id=trainee_id)
        page = self.paginate_queryset(queryset)
        return self.get_paginated_response(TagOut(page, many=True).data)


class TagContradictionsView(GenericAPIView):
    title_ko = "경향 태그의 반증"
    serializer_class = ContradictionIn

    def get_permissions(self):
        return [
            _requiring(
                IsAuthenticated & SupervisesTrainee, "반증을 기록할 수 있는 사람은 이 수련생의 담당 슈퍼바이저뿐입니다."
            )
        ]

    @extend_schema(summary="경향 태그에 반대 근거 기록", request=ContradictionIn, responses={201: TagOut, 200: TagOut})
    def post(self, request, trainee_id: int, tag: str):
        self.check_object_permissions(request, visible_trainee(viewer=request.user, trainee_id=trainee_id))
        try:
            tag_definition(tag)
        except TagInputError as error:
            raise _as_validation_error(error) from None
        data = ContradictionIn(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            done = tag_contradiction_record(
                trainee_id=trainee_id,
                tag=tag,
                event=values["event"],
                severity=values["severity"],
                session_id=values.get("session"),
                origin=Origin.SUPERVISOR,
                recorded_by=request.user,
            )
        except TagInputError as error:
            raise _as_validation_error(error) from None
        except TraineeTag.DoesNotExist:
            raise NotFound(f"이 수련생에게는 아직 태그 '{tag}'가 없습니다. 반증은 있는 태그에만 기록합니다.") from None
        return Response(
            _serialized(done.tag.pk), status=status.HTTP_201_CREATED if done.created else status.HTTP_200_OK
        )


def _serialized(tag_pk: int) -> dict:
    return TagOut(tag_with_history(tag_pk)).data
