// Steps through a recorded session's frames (embedded as JSON by the server; built for the
// world they come from by server/transcript.py). Everything recorded is agent-written text: it
// is only ever set as textContent, never parsed as HTML.
(function () {
  "use strict";
  var view = JSON.parse(document.getElementById("frames").textContent);
  var frames = view.frames;
  var pos = document.getElementById("pos");
  var TREE = ["axtree", "a11y_tree", "ui_elements"];
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = text; }
    return node;
  }
  function text(id, value) {
    document.getElementById(id).textContent = value === null || value === undefined ? "" : value;
  }
  function images(f) {
    var box = document.getElementById("f-images");
    box.replaceChildren();
    f.images.forEach(function (im) {
      var fig = el("figure", "shot");
      var img = el("img");
      img.src = im.url;
      img.alt = im.part + " of this step";
      fig.appendChild(img);
      var t = f.target || {};
      if (im.width && (t.box || t.point) && (im.part === "screenshot" || f.images.length === 1)) {
        var mark = el("div", t.box ? "mark" : "mark point");
        var x = t.box ? t.box[0] : t.point[0], y = t.box ? t.box[1] : t.point[1];
        mark.style.left = (100 * x / im.width) + "%";
        mark.style.top = (100 * y / im.height) + "%";
        if (t.box) {
          mark.style.width = (100 * t.box[2] / im.width) + "%";
          mark.style.height = (100 * t.box[3] / im.height) + "%";
        }
        mark.title = "the next action: " + t.action;
        fig.appendChild(mark);
      }
      fig.appendChild(el("figcaption", null, im.part));
      box.appendChild(fig);
    });
  }
  function tree(f) {
    var pre = document.getElementById("f-tree");
    var title = document.getElementById("tree-title");
    var key = TREE.filter(function (k) { return f.texts[k]; })[0];
    pre.replaceChildren();
    pre.hidden = title.hidden = !key;
    if (!key) { return; }
    title.textContent = key;
    var bid = f.target && f.target.bid ? "[" + f.target.bid + "]" : null;
    var hit = null;
    f.texts[key].split("\n").forEach(function (line) {
      var span = el("span", bid && line.indexOf(bid) >= 0 && !hit ? "hit" : null, line + "\n");
      if (span.className === "hit") { hit = span; }
      pre.appendChild(span);
    });
    if (hit) { pre.scrollTop = Math.max(0, hit.offsetTop - pre.offsetTop - 60); }
  }
  function chat(i) {
    var box = document.getElementById("chat");
    if (!box) { return; }
    box.replaceChildren();
    var ep = frames[i].episode, last = null;
    for (var j = 0; j <= i; j++) {
      if (frames[j].episode !== ep) { continue; }
      frames[j].chat.forEach(function (b) {
        var who = { user: "user", assistant: "assistant", tool_call: "tool call " + (b.name || ""),
                    tool: "tool result", error: "error" }[b.role] || b.role;
        var bubble = el("div", "bubble " + b.role);
        bubble.appendChild(el("span", "who", who));
        bubble.appendChild(document.createTextNode(b.text));
        if (j === i) { bubble.classList.add("now"); last = bubble; }
        box.appendChild(bubble);
      });
    }
    if (last) { box.scrollTop = last.offsetTop - box.offsetTop - 40; }
  }
  function texts(f) {
    var box = document.getElementById("f-texts");
    box.replaceChildren();
    Object.keys(f.texts).forEach(function (k) {
      if (TREE.indexOf(k) >= 0 || (view.conversation && k === "conversation")) { return; }
      var d = el("details");
      d.appendChild(el("summary", null, k + " (" + f.texts[k].length + " characters)"));
      d.appendChild(el("pre", null, f.texts[k]));
      box.appendChild(d);
    });
  }
  function show(i) {
    i = Math.max(0, Math.min(frames.length - 1, i));
    var f = frames[i];
    pos.value = i;
    text("where", (i + 1) + " / " + frames.length);
    text("instruction", view.instructions[String(f.episode)] || "(none recorded)");
    text("f-episode", f.episode);
    text("f-index", f.index);
    text("f-reward", f.reward);
    text("f-ms", f.ms === null || f.ms === undefined ? "" : f.ms + " ms");
    text("f-action", f.action);
    text("f-target", f.target ? f.target.action : "");
    text("f-error", f.error);
    images(f);
    tree(f);
    chat(i);
    texts(f);
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
