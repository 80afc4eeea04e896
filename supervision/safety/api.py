"""HTTP API of the safety events (CONTRACT §8): validate, call a selector or the service, serialize.

Order of refusals: an event the caller may not see → 404; a review the caller's role may not make → 403;
bad input → 400 naming the field.
"""

from __future__ import annotations

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from supervision.api.filters import TraineeFilter, TrueFalseFilter
from supervision.api.permissions import SupervisesTrainee
from supervision.models import TurnClientState
from supervision.safety.selectors import event_order, safety_event, safety_events
from supervision.safety.serializers import ReviewIn, SafetyEventSerializer
from supervision.safety.services import ReviewRejected, safety_event_review
from supervision.suggesting.selectors import suggested_safety_events


class SafetyEventFilter(django_filters.FilterSet):
    """``?trainee=<id or username>&answered=true|false&reviewed=true|false``; each optional."""

    trainee = TraineeFilter(field_name="turn__session__trainee")
    answered = TrueFalseFilter(label="위험사정으로 응답되었는지")
    reviewed = TrueFalseFilter(label="슈퍼바이저가 검토했는지")


class SafetyEventList(GenericAPIView):
    title_ko = "안전 사건 목록"
    serializer_class = SafetyEventSerializer
    filterset_class = SafetyEventFilter
    queryset = TurnClientState.objects.none()  # for the schema only: reads go through the role-aware selector

    def get_queryset(self):
        return safety_events(self.request.user)

    @extend_schema(summary="안전 사건 목록(응답·검토 안 된 것 먼저)", responses=SafetyEventSerializer(many=True))
    def get(self, request):
        events = self.filter_queryset(self.get_queryset())
        suggested = self._suggested(request)
        if suggested:
            # Sessions nobody has labelled add the suggester's events (CONTRACT §9), in the same order.
            events = sorted([*events, *suggested], key=event_order)
        page = self.paginate_queryset(events)
        return self.get_paginated_response(SafetyEventSerializer(page, many=True).data)

    def _suggested(self, request) -> list:
        filters = self.filterset_class(request.GET, queryset=self.get_queryset(), request=request)
        if not filters.is_valid():
            return []  # filter_queryset has answered 400 already
        wanted = filters.form.cleaned_data
        if wanted.get("reviewed") is True:
            return []  # a suggestion is reviewed once accepted, as a curated event
        trainee = wanted.get("trainee")
        events = suggested_safety_events(request.user, trainee_id=trainee.pk if trainee else None)
        if wanted.get("answered") in (True, False):  # an absent filter is ""
            events = [e for e in events if e.answered == wanted["answered"]]
        return events


class SafetyEventReview(GenericAPIView):
    title_ko = "안전 사건 검토"
    serializer_class = ReviewIn
    queryset = TurnClientState.objects.none()  # for the schema only

    @extend_schema(summary="안전 사건 검토(담당 슈퍼바이저)", request=ReviewIn, responses={200: SafetyEventSerializer})
    def post(self, request, event_id: int):
        event = safety_event(request.user, event_id)
        if event is None:
            raise NotFound("안전 사건을 찾을 수 없습니다.")
        if not SupervisesTrainee().has_object_permission(request, self, event.turn.session):
            raise PermissionDenied("안전 사건을 검토할 수 있는 사람은 이 수련생의 담당 슈퍼바이저뿐입니다.")
        data = ReviewIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            safety_event_review(event=event, note=data.validated_data["note"], reviewed_by=request.user)
        except ReviewRejected as error:
            raise ValidationError({error.field: [error.message]}) from None
        return Response(SafetyEventSerializer(safety_event(request.user, event_id)).data)
