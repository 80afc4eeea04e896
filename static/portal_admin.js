// Tabular inlines read as cards on a narrow screen (static/portal_admin.css, "Tabular inlines on a phone").
// A table of five or six columns squeezed to a phone's width left a few characters a line; as cards each
// cell keeps the full width under its column's name. The names are copied from the table's header into
// each cell's data-label, which the stylesheet shows; without this script the table scrolls in its box.
"use strict";
(function () {
  function labelRows(table) {
    const names = Array.from(table.tHead ? table.tHead.rows[0].cells : [], (th) => th.textContent.trim());
    for (const row of table.tBodies[0] ? table.tBodies[0].rows : []) {
      Array.from(row.cells).forEach((cell, index) => {
        if (names[index] && !cell.classList.contains("original")) {
          cell.dataset.label = names[index];
        }
      });
    }
    table.classList.add("cards-when-narrow");
  }

  function labelAll() {
    document.querySelectorAll('.inline-group[data-inline-type="tabular"] table').forEach(labelRows);
  }

  document.addEventListener("DOMContentLoaded", labelAll);
  // A row added with "add another" is a copy of the template row, labelled already; label again anyway in
  // case another script rebuilt it.
  document.addEventListener("formset:added", (event) => {
    const table = event.target.closest("table");
    if (table) {
      labelRows(table);
    }
  });
})();
