// Markdown blocks: markdown-it without HTML, DOMPurify over its output, only http(s) links, big tables in parts.

import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';

import { el, safeUrl } from './dom.js';

export const TABLE_ROWS = 200; // rows of a table shown at once
export const MORE_ROWS = 1000; // rows each "show more" adds

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

// Rows past TABLE_ROWS are cut from the block tokens before their cells are parsed: a big table costs little until
// its rows are asked for. Their source lines wait in `env.held`, with the table's head lines to parse them again.
md.core.ruler.after('block', 'wv_hold_rows', (state) => {
  const held = state.env.held;
  if (!held) return;
  const kept = [];
  let lines = null;
  let table = null;
  let body = null;
  let rows = 0;
  let cut = [];
  for (const token of state.tokens) {
    if (token.type === 'table_open') table = token;
    else if (token.type === 'tbody_open') [body, rows, cut] = [token, 0, []];
    else if (token.type === 'tbody_close' && body) {
      if (cut.length) {
        body.attrSet('data-held', String(held.length));
        held.push({ head: lines.slice(table.map[0], table.map[0] + 2), rows: cut });
      }
      body = null;
    } else if (body && token.type === 'tr_open' && ++rows > TABLE_ROWS) {
      lines ??= state.src.split('\n');
      cut.push(lines[token.map[0]]);
    }
    if (!(body && rows > TABLE_ROWS)) kept.push(token);
  }
  state.tokens = kept;
});

/** Markdown source to a sanitised `.wv-markdown` element; table rows past TABLE_ROWS wait behind a button. */
export function markdownBlock(source, className = 'wv-markdown') {
  const env = { held: [] };
  const tokens = md.parse(source, env);
  const box = el('div', className);
  box.append(toFragment(md.renderer.render(tokens, md.options, env)));
  for (const body of box.querySelectorAll('tbody[data-held]')) {
    offerRows(body, env.held[Number(body.dataset.held)]);
    body.removeAttribute('data-held');
  }
  return box;
}

function offerRows(body, { head, rows }) {
  const button = el('button', 'wv-more');
  button.type = 'button';
  const label = () => {
    const left = rows.length.toLocaleString('en');
    button.textContent =
      rows.length > MORE_ROWS ? `Show ${MORE_ROWS.toLocaleString('en')} more rows (${left} not shown)` : `Show the other ${left} rows`;
  };
  label();
  button.addEventListener('click', () => {
    const part = rows.splice(0, MORE_ROWS);
    const html = md.render([...head, ...part].join('\n'), {}); // no `held`: every row of the part
    body.append(...toFragment(html).querySelectorAll('tbody > tr'));
    if (rows.length) label();
    else button.remove();
  });
  body.closest('table').after(button);
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
