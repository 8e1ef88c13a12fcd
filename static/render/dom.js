// The few DOM helpers the renderer's modules share: elements with classes and text, never HTML strings.

export function el(tag, className = '', text = undefined) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function add(parent, ...children) {
  for (const child of children) if (child) parent.append(child);
  return parent;
}

// The next frame, or a task when frames do not come (a hidden tab): lets the page breathe between heavy blocks.
export function breathe() {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 50);
    requestAnimationFrame(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

// Only http(s) URLs are links: anything else (javascript:, data:, relative) is refused.
export function safeUrl(href) {
  try {
    const url = new URL(String(href));
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}
