// The export screen's 「모두 선택」 (templates/admin/import_export/export.html): django-import-export wires it with
// an inline onchange attribute, which the Content-Security-Policy blocks. The library's own handler
// (onSelectToggleChange, export_selectable_fields.js) is called from here instead.
document.addEventListener("DOMContentLoaded", () => {
  const toggle = document.getElementById("select-all-toggle");
  if (toggle && typeof onSelectToggleChange === "function") {
    toggle.addEventListener("change", onSelectToggleChange);
  }
  // Unticking a single field unticks 「모두 선택」; ticking them all ticks it again.
  const boxes = document.querySelectorAll('.selectable-field-export-row input[type="checkbox"]');
  boxes.forEach((box) => box.addEventListener("change", () => {
    if (toggle) toggle.checked = Array.from(boxes).every((b) => b.checked);
  }));
});
