// Keeps the dashboard current from /dashboard/events (Server-Sent Events; the cookie signs in).
(function () {
  "use strict";
  var body = document.querySelector("#sessions tbody");
  var status = document.getElementById("live-status");
  var source = new EventSource("/dashboard/events?page=" + body.dataset.page);
  function fragment(html) {
    var t = document.createElement("tbody");
    t.innerHTML = html;
    return t.firstElementChild;
  }
  source.addEventListener("sessions", function (msg) {
    var data = JSON.parse(msg.data);
    Object.keys(data.rows).forEach(function (id) {
      var row = fragment(data.rows[id]);
      var old = document.getElementById("s-" + id);
      if (old) { old.replaceWith(row); } else { body.prepend(row); }  // newest first
    });
    data.gone.forEach(function (id) {
      var old = document.getElementById("s-" + id);
      if (old) { old.remove(); }
    });
    while (body.children.length > data.per_page) { body.lastElementChild.remove(); }
    document.getElementById("session-count").textContent = data.count;
  });
  source.addEventListener("stats", function (msg) {
    var data = JSON.parse(msg.data);
    document.getElementById("rates").innerHTML = data.rates;
    document.getElementById("stats").innerHTML = data.panels;
  });
  source.onopen = function () { status.textContent = "live"; };
  source.onerror = function () { status.textContent = "reconnecting…"; };
})();
