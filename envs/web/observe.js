// Marks elements with stable ids (data-bid) and returns the page as an accessibility-tree text.
// Runs in the page on each observation. Ids persist on elements across steps, so an id the agent
// read stays valid until its element leaves the page. Elements that listen for clicks (listen.js
// records addEventListener calls; onclick properties are read here) are kept even without a role
// or a name: an icon bound by a script is as actionable as a button. A clickable element without
// text says which it is by its id or class (`hint`), else two icons would read alike.
([maxChars, firstBid]) => {
  const IMPLICIT = {
    A: (e) => (e.hasAttribute("href") ? "link" : "generic"), BUTTON: () => "button",
    SELECT: (e) => (e.multiple || e.size > 1 ? "listbox" : "combobox"), OPTION: () => "option",
    TEXTAREA: () => "textbox", H1: () => "heading", H2: () => "heading", H3: () => "heading",
    H4: () => "heading", H5: () => "heading", H6: () => "heading", IMG: () => "img",
    UL: () => "list", OL: () => "list", LI: () => "listitem", TABLE: () => "table",
    TR: () => "row", TD: () => "cell", TH: () => "columnheader", FORM: () => "form",
    NAV: () => "navigation", LABEL: () => "LabelText", P: () => "paragraph",
    DIALOG: () => "dialog", SVG: () => "graphics", CANVAS: () => "canvas", SPAN: () => "generic",
    DIV: () => "generic", SECTION: () => "region", MAIN: () => "main", HEADER: () => "banner",
    FOOTER: () => "contentinfo", ARTICLE: () => "article", FIELDSET: () => "group",
    LEGEND: () => "legend", SUMMARY: () => "button", DETAILS: () => "group",
    INPUT: (e) => ({
      checkbox: "checkbox", radio: "radio", button: "button", submit: "button", reset: "button",
      image: "button", range: "slider", number: "spinbutton", search: "searchbox",
      hidden: null, file: "button", color: "button",
    }[(e.type || "text").toLowerCase()] ?? "textbox"),
  };
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK"]);
  const INTERACTIVE = new Set(["link", "button", "checkbox", "radio", "textbox", "combobox",
    "listbox", "option", "slider", "spinbutton", "searchbox", "menuitem", "tab", "switch"]);
  // ids continue from the session's counter, so an id never names a different element later,
  // even on another page or tab
  window.__palaestraNextBid = Math.max(window.__palaestraNextBid || 1, firstBid);
  const LISTENED = window.__palaestraListened;
  const clickable = (e) => !!(e.onclick || e.onmousedown || e.onmouseup || LISTENED?.has(e));
  // inline children whose text belongs to their parent's text (a bold word inside a sentence)
  const PHRASING = new Set(["SPAN", "B", "I", "EM", "STRONG", "A", "CODE", "SMALL", "SUB", "SUP",
    "U", "MARK", "LABEL", "FONT", "ABBR", "Q", "S", "TIME", "BR"]);
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim();
  const quote = (s) => "'" + clean(s).slice(0, 200).replace(/'/g, "\\'") + "'";
  const visible = (e) => {
    const st = getComputedStyle(e);
    if (st.display === "none" || st.visibility === "hidden" || st.visibility === "collapse") return false;
    const r = e.getBoundingClientRect();
    return r.width > 0 || r.height > 0 || st.display === "contents";
  };
  const nameOf = (e, role) => {
    const label = e.getAttribute("aria-label");
    if (label) return label;
    const by = e.getAttribute("aria-labelledby");
    if (by) return by.split(/\s+/).map((id) => document.getElementById(id)?.innerText || "").join(" ");
    if (e.labels && e.labels.length) return Array.from(e.labels).map((l) => l.innerText).join(" ");
    if (e.tagName === "IMG") return e.alt || e.title || "";
    if (e.tagName === "INPUT" && ["button", "submit", "reset"].includes(e.type)) return e.value;
    if (e.tagName === "INPUT" || e.tagName === "TEXTAREA") return e.placeholder || e.title || "";
    if (e.tagName === "SELECT") return e.title || "";
    if (["link", "button", "option", "heading", "listitem", "cell", "columnheader", "tab",
         "menuitem", "LabelText", "legend"].includes(role)) return e.innerText || e.textContent;
    return e.title || "";
  };
  const lines = [];
  let chars = 0;
  const emit = (depth, text) => {
    if (chars > maxChars) return;
    const line = "\t".repeat(depth) + text;
    chars += line.length + 1;
    lines.push(chars > maxChars ? "\t".repeat(depth) + "... (truncated)" : line);
  };
  const walk = (node, depth) => {
    for (const child of node.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) {
        const text = clean(child.textContent);
        if (text && !node.__palaestraNamed) emit(depth, "StaticText " + quote(text));
        continue;
      }
      if (child.nodeType !== Node.ELEMENT_NODE || SKIP.has(child.tagName)) continue;
      const tag = child.tagName.toUpperCase();
      if (!visible(child) && tag !== "OPTION") continue;
      const explicit = child.getAttribute("role");
      let role = explicit || (IMPLICIT[tag] ? IMPLICIT[tag](child) : "generic");
      if (role === null) continue;
      if (!child.dataset.bid) child.dataset.bid = String(window.__palaestraNextBid++);
      child.__palaestraNamed = false;
      const listens = !INTERACTIVE.has(role) && clickable(child);
      // inline text that acts as a link (a span, an anchor without href, with a click handler)
      // is one; a clickable block (a card, an overlay) stays generic, with `clickable`
      if (listens && !explicit && role === "generic" && PHRASING.has(tag)
          && (tag === "A" || !child.children.length) && clean(child.textContent)) role = "link";
      let name = clean(nameOf(child, role));
      if (!name && listens && role === "generic") {
        // a clickable container (a card, an icon with a caption) is named by all its text
        name = clean(child.innerText);
        if (name) child.__palaestraNamed = true;
      } else if (!name && !INTERACTIVE.has(role)) {
        // an element with text of its own gets a name (and so a bid the agent can click); the
        // text of inline children is part of it (a sentence is not cut around its bold word)
        const own = Array.from(child.childNodes).some(
          (n) => n.nodeType === Node.TEXT_NODE && clean(n.textContent));
        const inline = Array.from(child.children).every((c) => PHRASING.has(c.tagName));
        name = !own ? "" : inline ? clean(child.textContent) : clean(Array.from(child.childNodes)
          .filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join(" "));
        if (name) child.__palaestraNamed = true;
      }
      child.__palaestraNamed = child.__palaestraNamed || (!!name && (INTERACTIVE.has(role) ||
        ["heading", "LabelText", "listitem", "cell", "legend", "columnheader"].includes(role)));
      const props = [];
      if (child.tagName === "INPUT" || child.tagName === "TEXTAREA") {
        if (["checkbox", "radio"].includes(child.type)) props.push("checked=" + child.checked);
        else props.push("value=" + quote(child.value));
      }
      if (child.tagName === "SELECT" && child.selectedOptions.length)
        props.push("value=" + quote(child.selectedOptions[0].text));
      if (child.tagName === "OPTION" && child.selected) props.push("selected");
      if (child.disabled) props.push("disabled");
      if (document.activeElement === child) props.push("focused");
      const expanded = child.getAttribute("aria-expanded");
      if (expanded) props.push("expanded=" + expanded);
      if (listens) {
        props.push("clickable");
        if (!name) {
          const hint = child.id || (typeof child.className === "string" ? child.className : "");
          if (clean(hint)) props.push("hint=" + quote(hint));
        }
      }
      const interesting = role !== "generic" || name || props.length;
      if (interesting) {
        const nameText = name ? " " + quote(name) : "";
        emit(depth, "[" + child.dataset.bid + "] " + role + nameText +
          (props.length ? ", " + props.join(", ") : ""));
      }
      walk(child, interesting ? depth + 1 : depth);
    }
  };
  emit(0, "RootWebArea " + quote(document.title));
  if (document.body) walk(document.body, 1);
  return [lines.join("\n"), window.__palaestraNextBid, document.title];
}
