"""The admin's plain-table import screens (django-import-export: the roster, label aliases): the same file
limits as the transcript importer, checked before the library parses a byte, and the previewed upload kept
server-side for its owner's confirm step.

The library's own confirm step names a file in the system's temporary folder from a hidden form field and
deletes it afterwards; here the form names a ``TableUpload`` id that only the person who previewed it, on the
same screen, can take, once.
"""

from __future__ import annotations

import datetime
import io
import uuid

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from supervision.importing.jobs import UploadRefused, upload_too_large_message
from supervision.importing.models import TableUpload
from supervision.importing.readers import FileRejected
from supervision.importing.spreadsheet_readers import check_xlsx_container, count_csv_rows, count_xlsx_rows

# A preview not confirmed within this time is dropped (the person uploads the file again).
TABLE_UPLOAD_LIFETIME = datetime.timedelta(hours=2)
STALE_PREVIEW_MESSAGE = (
    "이 미리보기는 만료되었거나 이미 가져왔거나 다른 사용자·화면의 것이라 가져올 수 없습니다. 파일을 다시 올려 주세요."
)


def table_row_limit() -> tuple[int, str]:
    """The tighter of the two row caps, with the setting that holds it (named in the message)."""
    if settings.TABLE_IMPORT_MAX_ROWS < settings.IMPORT_MAX_ROWS:
        return settings.TABLE_IMPORT_MAX_ROWS, "TABLE_IMPORT_MAX_ROWS"
    return settings.IMPORT_MAX_ROWS, "IMPORT_MAX_ROWS"


def table_file_problem(data: bytes, *, binary_format: bool) -> str | None:
    """Why a table upload is refused before parsing, or None. A zip is checked as an xlsx whatever format was
    chosen, so a bomb cannot pass as "csv"."""
    if not data:
        return "파일이 비어 있습니다."
    if len(data) > settings.IMPORT_MAX_BYTES:
        return upload_too_large_message(len(data))
    limit, setting = table_row_limit()
    try:
        if data[:4] == b"PK\x03\x04" or binary_format:
            check_xlsx_container(io.BytesIO(data))
            rows = count_xlsx_rows(data, stop_after=limit + 1) - 1  # the header row
        else:
            rows = count_csv_rows(data, stop_after=limit)
    except FileRejected as exc:
        return str(exc)
    if rows > limit:
        return f"행이 너무 많습니다. 이 화면의 한도는 {limit:,}행입니다(설정 {setting}). 파일을 나누어 가져오세요."
    return None


@transaction.atomic
def table_upload_keep(
    *, owner, screen: str, input_format: int, filename: str, data: bytes, resource_index: int = 0
) -> TableUpload:
    """Keeps a previewed upload for its owner's confirm step (and forgets everyone's stale previews)."""
    TableUpload.objects.filter(created_at__lt=timezone.now() - TABLE_UPLOAD_LIFETIME).delete()
    return TableUpload.objects.create(
        owner=owner,
        screen=screen,
        input_format=input_format,
        resource_index=resource_index,
        filename=filename[:255],
        data=data,
    )


@transaction.atomic
def table_upload_take(*, upload_id: str, owner, screen: str) -> TableUpload:
    """The owner's previewed upload for this screen, removed as it is taken: a second confirm, someone else's
    id, another screen's, an expired one or anything that is not an id is refused."""
    try:
        key = uuid.UUID(str(upload_id))
    except ValueError:
        raise UploadRefused(STALE_PREVIEW_MESSAGE) from None
    upload = (
        TableUpload.objects.select_for_update()
        .filter(pk=key, owner=owner, screen=screen, created_at__gte=timezone.now() - TABLE_UPLOAD_LIFETIME)
        .first()
    )
    if upload is None:
        raise UploadRefused(STALE_PREVIEW_MESSAGE)
    upload.delete()
    return upload
