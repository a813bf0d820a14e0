// payledger console: shows every <time> in the browser's zone, keeping the
// UTC time (as served) in its title for hover. No other script runs.
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
});
