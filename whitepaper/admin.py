from django.contrib import admin
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from . import webhooks
from .metrics import EXPLORER_METRICS, METRICS_BY_NAME
from .models import (
    Document, Engine, EngineVersion, Flavor, InstanceFamily, Methodology, PublishedResult, ResultTable, Vendor, Webhook,
    WebhookDelivery,
)


@admin.register(Vendor)
class VendorAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "name_zh", "origin"]


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ["slug", "vendor", "title", "edition", "published", "source_file", "changed_at"]
    list_filter = ["vendor", "published"]
    search_fields = ["slug", "title", "title_en"]


@admin.register(Methodology)
class MethodologyAdmin(admin.ModelAdmin):
    list_display = ["slug", "document", "tool", "tool_version", "threads", "duration_s", "statements_per_transaction"]
    list_filter = ["tool", "document__vendor", "document"]
    search_fields = ["slug", "name", "workload"]


@admin.register(Engine)
class EngineAdmin(admin.ModelAdmin):
    list_display = ["slug", "name"]


@admin.register(EngineVersion)
class EngineVersionAdmin(admin.ModelAdmin):
    list_display = ["engine", "version"]
    list_filter = ["engine"]


@admin.register(InstanceFamily)
class InstanceFamilyAdmin(admin.ModelAdmin):
    list_display = ["slug", "vendor", "name", "name_zh", "arch"]
    list_filter = ["vendor", "arch"]


@admin.register(Flavor)
class FlavorAdmin(admin.ModelAdmin):
    list_display = ["spec_code", "vendor", "family", "vcpus", "memory_gb", "storage", "memory_ratio"]
    list_filter = ["vendor", "family", "memory_ratio"]
    search_fields = ["spec_code"]
    list_select_related = ["vendor", "family"]


@admin.register(ResultTable)
class ResultTableAdmin(admin.ModelAdmin):
    list_display = ["label", "document", "position", "section", "methodology", "label_printed"]
    list_filter = ["document__vendor", "document"]
    search_fields = ["label", "section"]
    list_select_related = ["document", "methodology"]


@admin.register(PublishedResult)
class PublishedResultAdmin(admin.ModelAdmin):
    list_display = ["table", "engine_version", "flavor", "deployment", "edition", 
                    *[name for name in EXPLORER_METRICS if METRICS_BY_NAME[name].kind != "rows"]]
    list_filter = ["table__document__vendor", "table__document", "engine_version__engine", "engine_version",
                   "flavor__family", "flavor__memory_ratio", "deployment"]
    search_fields = ["flavor__spec_code", "table__label"]
    list_select_related = ["table__document", "engine_version__engine", "flavor__family"]
    raw_id_fields = ["table", "flavor", "engine_version"]


class WebhookDeliveryInline(admin.TabularInline):
    """The hook's delivery log, newest first (read-only)."""

    model = WebhookDelivery
    fields = ("created_at", "event", "status", "attempts", "last_status_code", "last_error", "last_attempt_at",
              "delivered_at")
    readonly_fields = fields
    extra = 0
    max_num = 0
    can_delete = False
    ordering = ("-id",)


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    """Staff register receivers here (docs/api.md, "Webhooks"): the URL is checked when saved; the secret is made
    once, shown here to staff to configure the receiver's signature check. Ticking `active` again re-enables a hook
    that was disabled after failing, its failure count reset."""

    list_display = ("name", "url", "active", "consecutive_failures", "disabled_reason")
    list_filter = ("active",)
    readonly_fields = ("signing_secret", "consecutive_failures", "disabled_reason", "disabled_at", "created_at")
    inlines = [WebhookDeliveryInline]

    @admin.display(description=_("Secret"))
    def signing_secret(self, obj):
        """The HMAC-SHA256 key, wrapping on a phone (64 characters without a break otherwise run off the screen)."""
        return format_html('<code style="overflow-wrap: anywhere">{}</code>', obj.secret) if obj.secret else "-"

    def save_model(self, request, obj, form, change):
        if change and obj.active and "active" in form.changed_data:
            obj.consecutive_failures, obj.disabled_reason, obj.disabled_at = 0, "", None
        super().save_model(request, obj, form, change)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "webhook", "event", "status", "attempts", "last_status_code", "last_error")
    list_filter = ("status", "event")
    readonly_fields = [f.name for f in WebhookDelivery._meta.fields]
    actions = ["redeliver"]

    @admin.action(description=_("Redeliver the selected undelivered or failed deliveries"))
    def redeliver(self, request, queryset):
        queued = webhooks.redeliver(list(queryset.select_related("webhook")))
        self.message_user(request, ngettext("%(n)d delivery queued again (those of disabled hooks are not).",
                                            "%(n)d deliveries queued again (those of disabled hooks are not).",
                                            queued) % {"n": queued})

    def has_add_permission(self, request):
        return False
