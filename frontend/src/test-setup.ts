// jsdom lacks a few browser APIs the components touch.
if (!('scrollIntoView' in Element.prototype)) {
  Object.defineProperty(Element.prototype, 'scrollIntoView', { value() {} });
}
