// Making an element (view.js, devices.js, prompt.js): its text is only ever set through
// textContent, never as markup.

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}
