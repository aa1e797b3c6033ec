(function () {
  "use strict";
  function key(cell, numeric) {
    var v = cell.getAttribute("data-sort");
    if (v === null) { return null; }
    return numeric ? parseFloat(v) : v;
  }
  function sortBy(table, index, th) {
    var numeric = th.getAttribute("data-type") === "num";
    var descending = th.getAttribute("aria-sort") !== "descending";
    if (th.getAttribute("aria-sort") === null) { descending = numeric; }
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (row, i) { return [key(row.cells[index], numeric), i, row]; });
    keyed.sort(function (a, b) {
      if (a[0] === b[0]) { return a[1] - b[1]; }
      if (a[0] === null) { return 1; }
      if (b[0] === null) { return -1; }
      var order = a[0] < b[0] ? -1 : 1;
      return descending ? -order : order;
    });
    keyed.forEach(function (k) { body.appendChild(k[2]); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    relabel(table);
  }
  function showFull(cell, full) {
    cell.textContent = full;
  }
  function showDitto(cell, full) {
    var mark = document.createElement("span");
    var hidden = document.createElement("span");
    mark.className = "ditto";
    mark.setAttribute("aria-hidden", "true");
    mark.textContent = "\u2033";
    hidden.className = "sr-only";
    hidden.textContent = full;
    cell.textContent = "";
    cell.appendChild(mark);
    cell.appendChild(hidden);
  }
  function relabel(table) {
    var rows = table.tBodies[0].rows;
    var top = parseInt(table.getAttribute("data-top"), 10);
    Array.prototype.forEach.call(rows, function (row, i) {
      if (!isNaN(top)) { row.classList.toggle("more", i >= top); }
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      if (!th.hasAttribute("data-ditto")) { return; }
      var above = null;
      Array.prototype.forEach.call(rows, function (row) {
        var cell = row.cells[index];
        var full = cell.getAttribute("data-full");
        var repeat = full === above && cell.hasAttribute("data-sort");
        (repeat ? showDitto : showFull)(cell, full);
        above = full;
      });
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      th.querySelector("button").addEventListener("click", function () { sortBy(table, index, th); });
    });
  });
}());
