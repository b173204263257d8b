// The screen as AndroidWorld's UI element list: visible elements that can be acted on or that
// show text, in document order, with bounds in screen pixels (page CSS px x pixel ratio, shifted
// by the status bar). Called with [statusBarPx, pixelRatio]. A document caught before its
// parser reached <body> (a navigation committed after the load we waited for) is waited for.
async ([top, ratio]) => {
  if (!document.body && document.readyState === "loading") {
    await new Promise((done) => document.addEventListener("DOMContentLoaded", done, { once: true }));
  }
  const root = document.body || document.documentElement;
  if (!root) return [];
  // a <form>'s properties are shadowed by its fields' names (a field named "type" makes
  // form.type that field): read properties as their own type or not at all
  const str = (v) => (typeof v === "string" ? v : "");
  const typeOf = (e) => str(e.type).toLowerCase();
  const CLASS = (e) => {
    const t = e.tagName;
    const type = typeOf(e);
    if (t === "INPUT" && type === "checkbox") return "android.widget.CheckBox";
    if (t === "INPUT" && type === "radio") return "android.widget.RadioButton";
    if (t === "INPUT" && ["submit", "button", "reset"].includes(type)) return "android.widget.Button";
    if (t === "INPUT" || t === "TEXTAREA") return "android.widget.EditText";
    if (t === "SELECT") return "android.widget.Spinner";
    if (e.getAttribute("role") === "option") return "android.widget.CheckedTextView";
    if (t === "BUTTON" || e.getAttribute("role") === "button") return "android.widget.Button";
    if (t === "IMG") return "android.widget.ImageView";
    return "android.widget.TextView";
  };
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim();
  const W = window.innerWidth, H = window.innerHeight;
  const out = [];
  const seen = new Set();
  for (const e of root.querySelectorAll("*")) {
    if (["SCRIPT", "STYLE", "OPTION", "BR"].includes(e.tagName)) continue;
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.bottom <= 0 || r.top >= H || r.right <= 0 || r.left >= W) continue;
    const st = getComputedStyle(e);
    if (st.visibility === "hidden" || st.display === "none" || st.opacity === "0") continue;
    // covered (by a fixed bar, a sheet): a finger there would touch something else
    const cx = Math.min(Math.max((Math.max(0, r.left) + Math.min(W, r.right)) / 2, 0), W - 1);
    const cy = Math.min(Math.max((Math.max(0, r.top) + Math.min(H, r.bottom)) / 2, 0), H - 1);
    const hit = document.elementFromPoint(cx, cy);
    if (hit && hit !== e && !e.contains(hit) && !hit.contains(e)) continue;
    const tag = e.tagName;
    const editable = (tag === "INPUT" && !["checkbox", "radio", "submit", "button", "hidden"].includes(typeOf(e))) || tag === "TEXTAREA";
    const clickable = tag === "A" || tag === "BUTTON" || tag === "SELECT" || tag === "INPUT" || tag === "TEXTAREA" ||
      e.getAttribute("role") === "button" || e.getAttribute("role") === "option";
    let text = "";
    if (editable) text = e.value || "";
    else if (tag === "SELECT") text = e.selectedOptions[0]?.text || "";
    else if (clickable) text = clean(e.innerText);
    else text = clean(Array.from(e.childNodes).filter((n) => n.nodeType === 3).map((n) => n.textContent).join(" "));
    let desc = e.getAttribute("aria-label") || "";
    if (!desc && e.labels && e.labels.length) desc = clean(Array.from(e.labels).map((l) => l.innerText).join(" "));
    if (!desc && editable) desc = e.placeholder || "";
    if (!text && !desc && !clickable) continue;
    // a link or button is one element: its inner text nodes are not listed again
    if (seen.has(e.parentElement) && !clickable && !editable) { seen.add(e); continue; }
    if (clickable) seen.add(e);
    out.push({
      text, content_description: clean(desc), class_name: CLASS(e),
      resource_id: str(e.id) || e.getAttribute("name") || "",
      x_min: Math.round(Math.max(0, r.left) * ratio), y_min: Math.round((Math.max(0, r.top)) * ratio + top),
      x_max: Math.round(Math.min(W, r.right) * ratio), y_max: Math.round(Math.min(H, r.bottom) * ratio + top),
      is_clickable: clickable, is_editable: editable,
      is_scrollable: ["auto", "scroll"].includes(st.overflowY) && e.scrollHeight > e.clientHeight,
      is_checked: e.checked === true, is_focused: document.activeElement === e,
      is_enabled: e.disabled !== true,
      // a list row with a context menu (a long press opens it), as Android marks such rows
      is_long_clickable: clickable && !!e.closest("[data-menu]"),
      is_checkable: tag === "INPUT" && ["checkbox", "radio"].includes(typeOf(e)),
    });
  }
  return out;
}
