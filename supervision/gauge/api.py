from rest_framework import generics
from rest_framework.exceptions import ValidationError

from supervision.gauge.selectors import snapshots_visible_to
from supervision.gauge.serializers import GaugeSnapshotSerializer


class GaugeSnapshotList(generics.ListAPIView):
    """Review-gauge snapshots the user may see, newest first; ``?trainee=<user id>`` narrows to one trainee."""

    serializer_class = GaugeSnapshotSerializer
    filter_backends = ()

    def get_queryset(self):
        raw = self.request.query_params.get("trainee")
        trainee_id = None
        if raw not in (None, ""):
            try:
                trainee_id = int(raw)
            except ValueError:
                raise ValidationError({"trainee": ["수련생(trainee)은 사용자 id(정수)여야 합니다."]}) from None
            if not 0 < trainee_id < 2**31:
                raise ValidationError({"trainee": ["수련생(trainee) id가 범위를 벗어났습니다."]})
        return snapshots_visible_to(self.request.user, trainee_id=trainee_id)
