// A call's detail in the viewer: its header (tool, status, metadata, the raw switch), its result drawn from the wire
// texts, and its arguments and structured content as JSON trees. Built from what the server sent, as text only.

import { clearBlocks, renderBlocks, renderJson, renderTexts } from '../render/index.js';
import { parseBlocks } from '../wire.js';

let raw = false; // the raw switch holds for every call this tab shows

function el(tag, className, text) {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function json(title, value, options) {
  const box = el('div', 'wv-side-part');
  box.append(el('div', 'wv-section-title', title));
  if (value === null || value === undefined || (typeof value === 'object' && !Object.keys(value).length)) {
    box.append(el('div', 'wv-muted', 'none'));
  } else {
    const tree = box.appendChild(el('div', 'wv-json-view'));
    renderJson(tree, value, options);
  }
  return box;
}

function header(call, onRaw) {
  const box = el('div', 'wv-detail-header');
  const line = box.appendChild(el('div', 'wv-detail-line'));
  line.append(el('span', 'wv-detail-tool', call.tool));
  line.append(el('span', `wv-badge wv-badge-${call.is_error ? 'error' : 'ok'}`, call.is_error ? 'isError' : 'OK'));
  line.append(el('span', 'wv-muted', `#${call.ref}`));
  line.append(el('span', 'wv-space'));
  const toggle = line.appendChild(el('label', 'wv-raw-switch'));
  const input = toggle.appendChild(el('input', ''));
  input.type = 'checkbox';
  input.checked = raw;
  input.addEventListener('change', () => onRaw(input.checked));
  toggle.append('Raw wire text');
  const meta = box.appendChild(el('div', 'wv-meta'));
  for (const [name, value] of call.meta) meta.append(el('span', 'wv-meta-name', name), el('span', 'wv-meta-value', value));
  return box;
}

/** Draw `call` ({tool, is_error, ref, meta: [[name, value]], texts, arguments, structured}) into `element`, its
 * result with the renderer's `options`; resolves when the result is drawn. */
export function renderCall(element, call, options) {
  const blocks = el('div', 'wv-blocks');
  const draw = () => (raw ? renderTexts(blocks, call.texts, options) : renderBlocks(blocks, parseBlocks(call.texts), options));
  const grid = el('div', 'wv-detail-grid');
  const side = el('div', 'wv-side');
  side.append(json('Arguments', call.arguments, options), json('structuredContent', call.structured, options));
  grid.append(blocks, side);
  const switched = (value) => {
    raw = value;
    return draw();
  };
  for (const drawn of element.querySelectorAll('.wv-render')) clearBlocks(drawn); // the last call's charts go
  element.replaceChildren(header(call, switched), grid);
  return draw();
}
