// Steps through a recorded session's frames (embedded as JSON by the server).
(function () {
  "use strict";
  var frames = JSON.parse(document.getElementById("frames").textContent);
  var pos = document.getElementById("pos");
  function text(id, value) {
    document.getElementById(id).textContent = value === null || value === undefined ? "" : value;
  }
  function show(i) {
    i = Math.max(0, Math.min(frames.length - 1, i));
    var f = frames[i];
    pos.value = i;
    text("where", (i + 1) + " / " + frames.length);
    text("f-episode", f.episode);
    text("f-index", f.index);
    text("f-reward", f.reward);
    text("f-ms", f.ms === null || f.ms === undefined ? "" : f.ms + " ms");
    text("f-action", f.action);
    text("f-error", f.error);
    var img = document.getElementById("f-image");
    if (f.image) { img.src = f.image; img.hidden = false; } else { img.hidden = true; }
    text("f-verifier", f.verifier ? JSON.stringify(f.verifier, null, 1) : (f.done ? "(no report)" : "(not at an episode's end)"));
  }
  document.getElementById("prev").onclick = function () { show(+pos.value - 1); };
  document.getElementById("next").onclick = function () { show(+pos.value + 1); };
  pos.oninput = function () { show(+pos.value); };
  document.addEventListener("keydown", function (e) {
    if (e.key === "ArrowLeft") { show(+pos.value - 1); }
    if (e.key === "ArrowRight") { show(+pos.value + 1); }
  });
  show(+pos.value);
})();
