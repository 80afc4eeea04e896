"""Label aliases as a spreadsheet (django-import-export): export, and import through the admin form's rules."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from import_export import fields

from portal.tabular import PortalModelResource, row_label
from taxonomy.models import ClientStateDef, LabelAlias, LabelAxis, TechniqueLabelDef

ALIAS_COLUMNS = ("axis", "alias", "code")


class LabelAliasResource(PortalModelResource):
    """Columns ``axis`` (technique|client_state), ``alias`` and ``code`` (the label it stands for). A row
    whose alias exists on its axis updates it; aliases loaded from the taxonomy document never change."""

    code = fields.Field(column_name="code", attribute=None)

    class Meta:
        model = LabelAlias
        fields = ("axis", "alias", "code", "seeded")
        import_id_fields = ("axis", "alias")
        export_order = fields
        skip_unchanged = True

    def dehydrate_code(self, alias):
        return alias.code

    def import_instance(self, instance, row, **kwargs):
        from taxonomy.admin import LabelAliasForm  # the one place the alias rules live

        n = row_label(kwargs["row_number"])
        axis, alias, code = (str(row.get(c) or "").strip() for c in ALIAS_COLUMNS)
        if instance.pk is not None and instance.seeded:
            raise ValidationError({"alias": f"{n} alias: 분류 문서에서 적재된 별칭 '{alias}'은(는) 바꿀 수 없습니다."})
        model = {LabelAxis.TECHNIQUE: TechniqueLabelDef, LabelAxis.CLIENT_STATE: ClientStateDef}.get(axis)
        if model is None:
            raise ValidationError({"axis": f"{n} axis: '{axis}'는 technique 또는 client_state여야 합니다."})
        label = model.objects.filter(code=code).first()
        if label is None:
            raise ValidationError({"code": f"{n} code: '{code}'는 {axis} 코드가 아닙니다."})
        form = LabelAliasForm(
            data={"axis": axis, "alias": alias, axis: label.pk},
            instance=instance,
        )
        if not form.is_valid():
            raise ValidationError(
                {
                    (
                        field if field in ALIAS_COLUMNS else "alias"
                    ): f"{n} {field if field in ALIAS_COLUMNS else 'alias'}: " + " ".join(messages)
                    for field, messages in form.errors.items()
                }
            )
