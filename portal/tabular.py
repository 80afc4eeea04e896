"""What every django-import-export screen of the portal shares: formula-safe cells, all-or-nothing imports and
export screens that name each column in Korean with the file's header beside it.

The library's own ``IMPORT_EXPORT_ESCAPE_FORMULAE_ON_EXPORT`` (on in settings) only strips a leading ``=``;
every exported text cell is also given the transcript export's escape (``csv_escape``: a leading ``'``
before ``= + - @``, a tab or a carriage return), so no spreadsheet ever reads a cell as a formula.
"""

from __future__ import annotations

from django.core.exceptions import FieldDoesNotExist
from import_export import resources
from import_export.admin import ExportMixin
from import_export.forms import SelectableFieldsExportForm

from supervision.importing.spreadsheet_export import csv_escape


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


def row_label(row_number: int) -> str:
    """A row as both a spreadsheet (header = row 1, as the transcript importer counts) and the library's
    preview table (ROW: data rows from 1) show it."""
    return f"{row_number + 1}행(ROW {row_number})"
