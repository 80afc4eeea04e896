"""Code tables are read-only in the admin: labels arrive only through a data migration (append-only)
and codes never change. Aliases are curated here by staff."""

from django import forms
from django.contrib import admin
from django.db.models import Case, Value, When
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from portal.tabular import PortalExportMixin, PortalImportMixin
from taxonomy.models import ClientStateDef, LabelAlias, StageDef, TechniqueLabelDef
from taxonomy.normalize import normalize_label
from taxonomy.resources import LabelAliasResource


def code_html(code: str):
    """A code as the pages show codes: beside the Korean name, set apart as code."""
    return format_html("<code>{}</code>", code)


class ReadOnlyCodeTableAdmin(admin.ModelAdmin):
    def get_fields(self, request, obj=None):
        return ["code_display" if name == "code" else name for name in super().get_fields(request, obj)]

    @admin.display(description=_("코드"), ordering="code")
    def code_display(self, obj):
        return code_html(obj.code)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(StageDef)
class StageDefAdmin(ReadOnlyCodeTableAdmin):
    list_display = ("code_display", "ko", "definition", "position")
    readonly_fields = ("code_display",)


class RankedLabelSearch:
    """Search (and so the label autocomplete of the turn inlines) lists the labels whose Korean name is the
    term, then those it starts, then the code's, before labels that only mention it in their definition:
    typing 촉진 offers the 촉진 labels before 유머."""

    def get_search_results(self, request, queryset, search_term):
        queryset, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        if term:
            rank = Case(
                When(ko=term, then=Value(0)),
                When(ko__istartswith=term, then=Value(1)),
                When(code__istartswith=term, then=Value(2)),
                When(ko__icontains=term, then=Value(3)),
                When(code__icontains=term, then=Value(4)),
                default=Value(5),
            )
            queryset = queryset.annotate(search_rank=rank).order_by("search_rank", "position")
        return queryset, may_have_duplicates


@admin.register(TechniqueLabelDef)
class TechniqueLabelDefAdmin(RankedLabelSearch, ReadOnlyCodeTableAdmin):
    list_display = ("code_display", "ko", "category", "since", "position")
    readonly_fields = ("code_display",)
    list_filter = ("category", "since")
    search_fields = ("code", "ko", "definition")


@admin.register(ClientStateDef)
class ClientStateDefAdmin(RankedLabelSearch, ReadOnlyCodeTableAdmin):
    list_display = ("code_display", "ko", "safety_critical", "since", "position")
    readonly_fields = ("code_display",)
    list_filter = ("safety_critical", "since")
    search_fields = ("code", "ko", "definition")


class LabelAliasForm(forms.ModelForm):
    class Meta:
        model = LabelAlias
        fields = ("axis", "alias", "technique", "client_state")

    def clean(self):
        data = super().clean()
        axis, alias = data.get("axis"), data.get("alias")
        if axis == "technique" and (not data.get("technique") or data.get("client_state")):
            raise forms.ValidationError(_("기법 별칭은 기법 하나만 가리켜야 합니다."))
        if axis == "client_state" and (not data.get("client_state") or data.get("technique")):
            raise forms.ValidationError(_("내담자 상태 별칭은 내담자 상태 하나만 가리켜야 합니다."))
        if axis and alias:
            self.instance.normalized = normalize_label(alias)
            clash = LabelAlias.objects.filter(axis=axis, normalized=self.instance.normalized)
            if self.instance.pk:
                clash = clash.exclude(pk=self.instance.pk)
            if clash.exists():
                raise forms.ValidationError(_("같은 축에 이미 같은 표기의 별칭이 있습니다."))
        return data


@admin.register(LabelAlias)
class LabelAliasAdmin(PortalImportMixin, PortalExportMixin, admin.ModelAdmin):
    resource_classes = (LabelAliasResource,)
    form = LabelAliasForm
    list_display = ("alias_display", "axis", "target_code", "seeded")
    list_filter = ("axis", "seeded")
    search_fields = ("alias", "normalized", "technique__code", "client_state__code")
    list_select_related = ("technique", "client_state")
    autocomplete_fields = ("technique", "client_state")

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if obj is not None and not self.has_change_permission(request, obj):
            return ["alias_display" if name == "alias" else name for name in fields]
        return fields

    def get_readonly_fields(self, request, obj=None):
        return ("alias_display",)

    @admin.display(description=_("별칭"), ordering="alias")
    def alias_display(self, obj):
        # The catalogue's codes are aliases of themselves: shown as codes.
        return code_html(obj.alias) if obj.alias == obj.code else obj.alias

    @admin.display(description=_("가리키는 라벨"))
    def target_code(self, obj):
        target = obj.technique or obj.client_state
        return format_html("{} <code>{}</code>", target.ko, obj.code) if target else "—"

    def has_delete_permission(self, request, obj=None):
        # Aliases from the taxonomy document stay; staff-added ones may go.
        return super().has_delete_permission(request, obj) and not (obj and obj.seeded)
