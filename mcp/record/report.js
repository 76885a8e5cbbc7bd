(function () {
  "use strict";
  var tool = document.getElementById("f-tool");
  var outcome = document.getElementById("f-outcome");
  var shown = document.getElementById("shown");
  var entries = document.querySelectorAll("#timeline .entry");
  function apply() {
    var n = 0;
    entries.forEach(function (li) {
      var ok = (!tool.value || li.dataset.tool === tool.value) && (!outcome.value || li.dataset.outcome === outcome.value);
      li.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n + " of " + entries.length + " shown";
  }
  tool.addEventListener("change", apply);
  outcome.addEventListener("change", apply);
  apply();
})();
