// Markdown blocks: markdown-it without HTML, DOMPurify over its output, only http(s) links, big tables in parts.

import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';

import { el, safeUrl } from './dom.js';

export const TABLE_ROWS = 1000; // rows of a table shown at once; the rest come on demand, as many at a time

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });
// Images would load from anywhere (and hosts forbid them): a link to the image instead, its alt text as the label.
md.renderer.rules.image = (tokens, index) => {
  const token = tokens[index];
  const href = safeUrl(token.attrGet('src'));
  const label = md.utils.escapeHtml(`image: ${token.content || href || 'unnamed'}`);
  return href ? `<a href="${md.utils.escapeHtml(href)}">${label}</a>` : `<span>${label}</span>`;
};

const purify = DOMPurify();
purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.nodeName === 'A') {
    const href = safeUrl(node.getAttribute('href'));
    if (href) {
      node.setAttribute('href', href);
      node.setAttribute('rel', 'noopener noreferrer');
      node.setAttribute('target', '_blank');
    } else node.removeAttribute('href');
  }
});

function toFragment(html) {
  return purify.sanitize(html, { RETURN_DOM_FRAGMENT: true, FORBID_TAGS: ['img', 'style', 'form', 'input'] });
}

/** Markdown source to a sanitised `.wv-markdown` element; table rows past TABLE_ROWS wait behind a button. */
export function markdownBlock(source, className = 'wv-markdown') {
  const tokens = md.parse(source, {});
  const held = [];
  const kept = holdRows(tokens, held);
  const box = el('div', className);
  box.append(toFragment(md.renderer.render(kept, md.options, {})));
  const bodies = box.querySelectorAll('tbody[data-held]');
  for (const body of bodies) offerRows(body, held[Number(body.dataset.held)]);
  return box;
}

// Cut every table body after TABLE_ROWS rows; the cut rows' tokens go into `held`, the body is marked with its index.
function holdRows(tokens, held) {
  const kept = [];
  let rows = 0;
  let inBody = false;
  let rest = null;
  for (const token of tokens) {
    if (token.type === 'tbody_open') {
      inBody = true;
      rows = 0;
      rest = [];
      kept.push(token);
      continue;
    }
    if (token.type === 'tbody_close') {
      inBody = false;
      if (rest.length) {
        const opener = kept.findLast((t) => t.type === 'tbody_open');
        opener.attrSet('data-held', String(held.length));
        held.push(rest);
      }
      kept.push(token);
      continue;
    }
    if (inBody && token.type === 'tr_open') rows += 1;
    if (inBody && rows > TABLE_ROWS) rest.push(token);
    else kept.push(token);
  }
  return kept;
}

function offerRows(body, tokens) {
  const table = body.closest('table');
  const total = tokens.filter((t) => t.type === 'tr_open').length;
  let shown = 0;
  const button = el('button', 'wv-more');
  button.type = 'button';
  const label = () => {
    const left = total - shown;
    button.textContent = `Show ${Math.min(left, TABLE_ROWS).toLocaleString('en')} more rows (${left.toLocaleString('en')} not shown)`;
  };
  label();
  button.addEventListener('click', () => {
    const part = [];
    let count = 0;
    let index = 0;
    for (; index < tokens.length; index += 1) {
      if (tokens[index].type === 'tr_open' && (count += 1) > TABLE_ROWS) break;
      part.push(tokens[index]);
    }
    tokens = tokens.slice(index);
    shown += Math.min(count, TABLE_ROWS);
    const html = `<table><tbody>${md.renderer.render(part, md.options, {})}</tbody></table>`;
    const rows = toFragment(html).querySelectorAll('tr');
    body.append(...rows);
    if (tokens.length) label();
    else button.remove();
  });
  table.after(button);
  body.removeAttribute('data-held');
}

/** Send clicks on the links inside `root` to `openLink` (http(s) only); a link never navigates the page itself. */
export function routeLinks(root, openLink) {
  root.addEventListener('click', (event) => {
    const link = event.target instanceof Element ? event.target.closest('a') : null;
    if (!link || !root.contains(link)) return;
    event.preventDefault();
    const href = safeUrl(link.getAttribute('href'));
    if (href && openLink) openLink(href);
  });
}
