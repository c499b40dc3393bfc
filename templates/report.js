// Filter by outcome and text search for report.html's row list; a link to a row shows it even when the filter
// hid it; printing opens the folded run details. It reads the page only: no data is ever put into this
// script, and the page stays complete and readable without it.
(function () {
  "use strict";
  var doc = document;
  doc.documentElement.setAttribute("data-js", "on");
  var details = doc.querySelector("details.facts");
  var wasOpen = false;
  window.addEventListener("beforeprint", function () {
    if (details) { wasOpen = details.open; details.open = true; }
  });
  window.addEventListener("afterprint", function () {
    if (details) { details.open = wasOpen; }
  });
  var controls = doc.getElementById("row-controls");
  var table = doc.getElementById("all-rows");
  if (!controls || !table) { return; }
  controls.hidden = false;
  var select = doc.getElementById("outcome-filter");
  var search = doc.getElementById("row-search");
  var status = doc.getElementById("row-status");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var texts = rows.map(function (tr) { return tr.textContent.toLowerCase(); });
  function apply() {
    var want = select.value;
    var query = search.value.trim().toLowerCase();
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var ok = (!want || rows[i].getAttribute("data-outcome") === want) &&
               (!query || texts[i].indexOf(query) !== -1);
      rows[i].hidden = !ok;
      if (ok) { shown++; }
    }
    status.textContent = shown.toLocaleString("en") + " of " + rows.length.toLocaleString("en") + " rows shown";
  }
  // A problem's link to its row (#row-12): if the filter hides that row, clear the filter first.
  function showTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var row = id ? doc.getElementById(id) : null;
    if (row && row.hidden && row.parentNode === table.tBodies[0]) {
      select.value = "";
      search.value = "";
      apply();
      row.scrollIntoView();
    }
  }
  select.addEventListener("change", apply);
  search.addEventListener("input", apply);
  window.addEventListener("hashchange", showTarget);
  apply();
  showTarget();
})();
