// The embedded phone's system behaviour inside every page (installed as an init script).
// A tap on a <select> opens a picker sheet listing its options, as Android's spinner dialog
// does; tapping an option selects it and closes the sheet. Headless Chromium has no native
// picker, and a phone user cannot "select an option" any other way.
(() => {
  const open = (select) => {
    document.getElementById("__palaestra_picker")?.remove();
    const sheet = document.createElement("div");
    sheet.id = "__palaestra_picker";
    sheet.setAttribute("role", "dialog");
    sheet.setAttribute("aria-label", select.labels?.[0]?.innerText || select.name || "Choose");
    sheet.style.cssText = "position:fixed;inset:0;background:#0008;z-index:2147483647;" +
      "display:flex;align-items:flex-end";
    const list = document.createElement("div");
    list.style.cssText = "background:#fff;width:100%;max-height:70%;overflow:auto;" +
      "border-radius:14px 14px 0 0;padding:8px 0";
    for (const option of select.options) {
      const item = document.createElement("button");
      item.type = "button";
      item.setAttribute("role", "option");
      item.textContent = option.text || "(none)";
      item.style.cssText = "display:block;width:100%;text-align:left;padding:14px 20px;" +
        "font:16px sans-serif;border:0;border-radius:0;min-height:0;color:#111827;" +
        "background:" + (option.selected ? "#e0e7ff" : "#fff");
      item.addEventListener("click", (e) => {
        e.stopPropagation();
        select.value = option.value;
        select.dispatchEvent(new Event("input", { bubbles: true }));
        select.dispatchEvent(new Event("change", { bubbles: true }));
        sheet.remove();
      });
      list.appendChild(item);
    }
    sheet.addEventListener("click", (e) => { if (e.target === sheet) sheet.remove(); });
    sheet.appendChild(list);
    document.body.appendChild(sheet);
  };
  const onSelect = (e) => {
    const select = e.target.closest && e.target.closest("select");
    if (select) { e.preventDefault(); if (e.type === "click") open(select); }
  };
  document.addEventListener("mousedown", onSelect, true);
  document.addEventListener("click", onSelect, true);
})();
