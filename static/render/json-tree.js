// A collapsible, read-only JSON tree built from DOM nodes (text only, never HTML); deep levels are built on demand.

import { el } from './dom.js';

const OPEN_DEPTH = 3; // levels shown open at first
const CHUNK = 200; // entries of one object or array built at once; "more" builds the next ones

export function jsonTree(value) {
  const root = el('div', 'wv-json');
  root.append(node(null, value, 0));
  return root;
}

function node(key, value, depth) {
  if (typeof value !== 'object' || value === null) {
    const line = el('div', 'wv-json-leaf');
    if (key !== null) line.append(el('span', 'wv-json-key', `${key}: `));
    line.append(el('span', `wv-json-${value === null ? 'null' : typeof value}`, JSON.stringify(value)));
    return line;
  }
  const entries = Array.isArray(value) ? value.map((item, index) => [index, item]) : Object.entries(value);
  const details = el('details', 'wv-json-node');
  const summary = el('summary');
  if (key !== null) summary.append(el('span', 'wv-json-key', `${key}: `));
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  summary.append(el('span', 'wv-json-count', `${open}${entries.length}${entries.length === 1 ? ' item' : ' items'}${close}`));
  details.append(summary);
  const children = el('div', 'wv-json-children');
  details.append(children);
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    more(children, entries, 0, depth + 1);
  };
  details.addEventListener('toggle', () => details.open && build());
  if (depth < OPEN_DEPTH) {
    details.open = true;
    build();
  }
  return details;
}

function more(children, entries, start, depth) {
  for (const [key, item] of entries.slice(start, start + CHUNK)) children.append(node(key, item, depth));
  const rest = entries.length - start - CHUNK;
  if (rest > 0) {
    const button = el('button', 'wv-more', `Show ${Math.min(rest, CHUNK)} more of ${rest}`);
    button.type = 'button';
    button.addEventListener('click', () => {
      button.remove();
      more(children, entries, start + CHUNK, depth);
    });
    children.append(button);
  }
}
