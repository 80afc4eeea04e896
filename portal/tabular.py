"""What every django-import-export screen of the portal shares: formula-safe cells, all-or-nothing imports and
export screens that name each column in Korean with the file's header beside it.

The library's own ``IMPORT_EXPORT_ESCAPE_FORMULAE_ON_EXPORT`` (on in settings) only strips a leading ``=``;
every exported text cell is also given the transcript export's escape (``csv_escape``: a leading ``'``
before ``= + - @``, a tab or a carriage return), so no spreadsheet ever reads a cell as a formula.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import FieldDoesNotExist, PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views.decorators.http import require_POST
from import_export import resources
from import_export.admin import ExportMixin, ImportMixin
from import_export.forms import ImportForm, SelectableFieldsExportForm
from import_export.results import RowResult

from supervision.importing.jobs import UploadRefused, upload_too_large_message
from supervision.importing.spreadsheet_export import csv_escape
from supervision.importing.table_uploads import table_file_problem, table_upload_keep, table_upload_take


class FormulaSafeMixin:
    def export_field(self, field, instance, **kwargs):
        value = super().export_field(field, instance, **kwargs)
        return csv_escape(value) if isinstance(value, str) else value


class AllOrNothingMixin:
    """One refused row refuses the file: the import runs in one transaction and is rolled back when any
    row is invalid (the admin then shows the preview with every row's error and offers no confirm)."""

    def import_data(self, dataset, dry_run=False, raise_errors=False, use_transactions=None, **kwargs):
        kwargs["rollback_on_validation_errors"] = True
        return super().import_data(dataset, dry_run=dry_run, raise_errors=raise_errors, use_transactions=True, **kwargs)


class PortalModelResource(AllOrNothingMixin, FormulaSafeMixin, resources.ModelResource):
    # Korean names of the columns that are not a field of the model (a related path, a computed column);
    # the others are named by the model field's verbose_name.
    column_labels: dict[str, str] = {}


class KoreanExportForm(SelectableFieldsExportForm):
    """The export screen's column check boxes: "회기 (session)" — the Korean name, then the header the file
    will carry (the library titles the English name: "Utterance Id")."""

    def _get_field_label(self, resource, field_name: str) -> str:
        label = getattr(resource, "column_labels", {}).get(field_name)
        if label is None:
            try:
                label = resource._meta.model._meta.get_field(field_name).verbose_name
            except FieldDoesNotExist:
                label = field_name
        field = resource.fields.get(field_name)
        return f"{label} ({field.column_name if field else field_name})"


class PortalExportMixin(ExportMixin):
    export_form_class = KoreanExportForm

    def get_export_filename(self, request, queryset, file_format) -> str:
        # The library names the file "SupervisorComment-<UTC date>": before 09:00 in Seoul that is yesterday.
        # The day the user sees, in the form the session export uses (sessions_20261207.xlsx).
        return f"{self.model._meta.model_name}_{timezone.localdate():%Y%m%d}.{file_format.get_extension()}"

    def export_action(self, request):
        # An unknown or invalid filter answers as the change list does (a message, not a 500): the library
        # builds the change list's queryset and lets IncorrectLookupParameters escape.
        try:
            return super().export_action(request)
        except IncorrectLookupParameters:
            messages.error(
                request, "알 수 없는 필터 조건이 있어 내보내지 않았습니다. 목록에서 필터를 다시 고른 뒤 내보내세요."
            )
            opts = self.model._meta
            return HttpResponseRedirect(
                reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist", current_app=self.admin_site.name)
            )


class GuardedImportForm(ImportForm):
    """The upload form refuses, before the library parses anything, what the transcript importer refuses:
    more than ``IMPORT_MAX_BYTES``, a zip bomb or DTD, more rows than the screen's cap."""

    def clean(self):
        cleaned = super().clean()
        upload, chosen = cleaned.get("import_file"), cleaned.get("format")
        if upload is None or chosen in (None, ""):
            return cleaned
        if upload.size > settings.IMPORT_MAX_BYTES:
            self.add_error("import_file", upload_too_large_message(upload.size))
            return cleaned
        upload.seek(0)
        data = upload.read()
        upload.seek(0)
        binary = settings.IMPORT_FORMATS[int(chosen)]().is_binary()
        if problem := table_file_problem(data, binary_format=binary):
            self.add_error("import_file", problem)
        return cleaned


class PreviewInMemory:
    """The library's temporary storage for the preview step only: the upload is read back from memory, never
    written to the system's temporary folder (the confirm step reads a ``TableUpload``, not this)."""

    def __init__(self, **kwargs) -> None:
        self.name = kwargs.get("name") or "preview"
        self.read_mode = kwargs.get("read_mode", "r")
        self.encoding = kwargs.get("encoding")
        self._data = b""

    def save(self, data: bytes) -> None:
        self._data = data

    def read(self):
        return self._data if "b" in self.read_mode else self._data.decode(self.encoding or "utf-8-sig")

    def remove(self) -> None:
        self._data = b""


class PortalImportMixin(ImportMixin):
    """django-import-export's import screens as the portal runs them: file limits before parsing, the preview
    kept server-side for its owner (the confirm form carries an id, never a file name), every row's errors as
    text on the column they concern, in Korean, and never a cell's value echoed back (a roster's passwords)."""

    import_form_class = GuardedImportForm
    tmp_storage_class = PreviewInMemory
    import_template_name = "admin/portal/table_import.html"

    def screen_name(self) -> str:
        return f"{self.opts.app_label}.{self.opts.model_name}"

    def get_import_context_data(self, **kwargs):
        return {**super().get_import_context_data(**kwargs), **self._column_context()}

    def _column_context(self) -> dict:
        labels = {}
        for resource_class in self.resource_classes or ():
            labels.update(getattr(resource_class, "column_labels", {}))
        return {"column_labels": labels}

    def get_confirm_form_initial(self, request, import_form):
        if import_form is None:
            return {}
        upload = import_form.cleaned_data["import_file"]
        upload.seek(0)
        kept = table_upload_keep(
            owner=request.user,
            screen=self.screen_name(),
            input_format=int(import_form.cleaned_data["format"]),
            filename=upload.name,
            data=upload.read(),
            resource_index=self.get_resource_index(import_form),
        )
        return {
            "import_file_name": str(kept.pk),
            "original_file_name": kept.filename,
            "format": import_form.cleaned_data["format"],
            "resource": import_form.cleaned_data.get("resource", ""),
        }

    @method_decorator(require_POST)
    def process_import(self, request, **kwargs):
        if not self.has_import_permission(request):
            raise PermissionDenied
        confirm_form = self.create_confirm_form(request)
        try:
            if not confirm_form.is_valid():
                raise UploadRefused("확인 양식이 올바르지 않습니다. 파일을 다시 올려 주세요.")
            upload = table_upload_take(
                upload_id=confirm_form.cleaned_data["import_file_name"], owner=request.user, screen=self.screen_name()
            )
        except UploadRefused as exc:
            return self._import_page(request, status=400, refused=str(exc))
        # the format and resource are the ones previewed, never the form's; the limits held at the preview
        confirm_form.cleaned_data["resource"] = str(upload.resource_index)
        input_format = settings.IMPORT_FORMATS[upload.input_format](encoding=self.from_encoding)
        data = bytes(upload.data)
        dataset = input_format.create_dataset(data if input_format.is_binary() else data.decode(self.from_encoding))
        result = self.process_dataset(dataset, confirm_form, request, file_name=upload.filename, **kwargs)
        if result.has_errors() or result.has_validation_errors():
            # something changed since the preview (all or nothing: nothing was written)
            return self._import_page(request, status=200, result=result)
        return self.process_result(result, request)

    def _import_page(self, request, *, status: int, refused: str = "", result=None):
        context = {
            **self.admin_site.each_context(request),
            **self.get_import_context_data(),
            "title": "가져오기",
            # a fresh, unbound upload form: the person uploads the file again
            "form": self.get_import_form_class(request)(
                self.get_import_formats(), self.get_import_resource_classes(request)
            ),
            "opts": self.model._meta,
            "refused": refused,
            "result": result,
            "import_error_display": self.import_error_display,
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, [self.import_template_name], context, status=status)

    def add_success_message(self, result, request):
        summary = getattr(self.resource_classes[0], "import_summary", None) if self.resource_classes else None
        if summary is not None:
            messages.success(request, summary(result))
            return
        totals = result.totals
        messages.success(
            request,
            f"가져오기를 마쳤습니다({self.opts.verbose_name_plural}): 새로 {totals[RowResult.IMPORT_TYPE_NEW]}건, "
            f"바뀜 {totals[RowResult.IMPORT_TYPE_UPDATE]}건, 그대로 {totals[RowResult.IMPORT_TYPE_SKIP]}건.",
        )


def row_label(row_number: int) -> str:
    """A row as both a spreadsheet (header = row 1, as the transcript importer counts) and the library's
    preview table (ROW: data rows from 1) show it."""
    return f"{row_number + 1}행(ROW {row_number})"
