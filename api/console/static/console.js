// payledger console: shows every <time> in the browser's zone, keeping the
// UTC time (as served) in its title for hover, and lets a date-time picker
// in the browser's zone fill an RFC 3339 field. No other script runs.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var fmt = new Intl.DateTimeFormat(document.documentElement.lang || undefined, {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
    timeZoneName: "short"
  });
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (!isNaN(d.getTime())) {
      el.title = "UTC " + el.textContent;
      el.textContent = fmt.format(d);
    }
  });
  // The picker fills the field it names with the same instant in UTC, and
  // shows that field's instant when the page opens; without script the
  // field is typed by hand.
  var pad = function (n) { return String(n).padStart(2, "0"); };
  document.querySelectorAll("input[type=datetime-local][data-fills]").forEach(function (pick) {
    var field = document.getElementById(pick.dataset.fills);
    if (!field) { return; }
    var shown = new Date(field.value);
    if (field.value && !isNaN(shown.getTime())) {
      pick.value = shown.getFullYear() + "-" + pad(shown.getMonth() + 1) + "-" + pad(shown.getDate()) + "T" +
        pad(shown.getHours()) + ":" + pad(shown.getMinutes()) + ":" + pad(shown.getSeconds());
    }
    pick.addEventListener("change", function () {
      var d = new Date(pick.value);
      if (!isNaN(d.getTime())) { field.value = d.toISOString().replace(".000Z", "Z"); }
    });
  });
});
