// Filter by outcome and text search for report.html's row list. It reads the page only: no data is ever
// put into this script, and the page stays complete and readable without it.
(function () {
  "use strict";
  var doc = document;
  doc.documentElement.setAttribute("data-js", "on");
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
  select.addEventListener("change", apply);
  search.addEventListener("input", apply);
  apply();
})();
