// Installed in every frame before the page's own scripts: records which elements get a click-like
// event listener, so observe.js keeps controls bound by scripts (jQuery's .on, d3's .on,
// addEventListener) that have no role or name of their own. A WeakSet: nothing is kept alive.
(() => {
  if (window.__palaestraListened) return;
  const seen = new WeakSet();
  const KINDS = new Set(["click", "dblclick", "mousedown", "mouseup", "pointerdown", "pointerup"]);
  const add = EventTarget.prototype.addEventListener;
  Object.defineProperty(window, "__palaestraListened", { value: seen });
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    if (KINDS.has(type) && this instanceof Element && this !== document.body) seen.add(this);
    return add.call(this, type, listener, options);
  };
})();
