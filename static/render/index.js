// The presenter block renderer: draws parsed blocks (wire.js `parseBlocks`) into a DOM element.
//
// renderBlocks(element, blocks, options) with options {theme: 'light'|'dark', variables: {cssVar: value},
// openLink(url), suggest(tool, reason) | null, mermaid: async (element, source) => void | undefined,
// viewerUrl: string | undefined}. It resolves once every block is drawn; a block that fails shows its text and why.
// Beside it: renderTexts (each wire text verbatim), renderJson (a JSON tree), clearBlocks (release an element's
// charts). The styles come with it (render.css, injected once); nothing in a result runs script: the sanitising
// rules are in echarts-options.js and markdown.js.

import css from './render.css';
import { add, breathe, el, safeUrl } from './dom.js';
import { drawChart, chartOptions } from './chart.js';
import { dataBlock, rawBlock, rulesBlock, section, suggestionsBlock, toolErrorCard, validationErrorCard, warningCard } from './cards.js';
import { jsonTree } from './json-tree.js';
import { markdownBlock, routeLinks } from './markdown.js';
import { displayOrder } from './order.js';

export { displayOrder } from './order.js';
export { sanitizeEcharts } from './echarts-options.js';

const WIDTHS = new Set(['full', 'half', 'third']);
const SLICE_MS = 50; // the longest the renderer keeps the page busy before it lets a frame through
const renders = new WeakMap(); // element → its latest render: what it set up (charts) is released by the next one

function injectCss() {
  if (document.getElementById('wv-render-css')) return;
  const style = el('style');
  style.id = 'wv-render-css';
  style.textContent = css;
  document.head.append(style);
}

// Empty `element` for a new render (releasing the last one's charts) with the theme, the variables and the links.
function prepare(element, options) {
  injectCss();
  for (const dispose of renders.get(element)?.cleanup ?? []) dispose();
  const current = { cleanup: [] };
  renders.set(element, current);
  element.replaceChildren();
  element.classList.add('wv-render');
  element.classList.toggle('wv-dark', options.theme === 'dark');
  for (const [name, value] of Object.entries(options.variables ?? {})) {
    if (name.startsWith('--')) element.style.setProperty(name, String(value));
  }
  if (!element.dataset.wvLinks) {
    element.dataset.wvLinks = '1';
    routeLinks(element, (url) => element.wvOpenLink?.(url));
  }
  element.wvOpenLink = options.openLink;
  return current;
}

/** Draw `blocks` into `element` (its content is replaced). Resolves when every chart and diagram is drawn. */
export async function renderBlocks(element, blocks, options = {}) {
  const current = prepare(element, options);
  const context = { options, cleanup: current.cleanup, pending: [] };
  let grid = null;
  for (const block of displayOrder(blocks)) {
    if (block.kind === 'ui') {
      if (grid === null) grid = element.appendChild(el('div', 'wv-ui-grid'));
      const width = WIDTHS.has(block.width) ? block.width : 'full';
      grid.append(guarded(block, `wv-block wv-w-${width}`, (box) => uiBlock(box, block, context)));
    } else {
      grid = null;
      element.append(guarded(block, 'wv-block', (box) => box.append(otherBlock(block, options))));
    }
  }
  // Charts and diagrams are drawn one after the other; the page gets a frame whenever one slice of work passes
  // SLICE_MS, so twenty of them never freeze it.
  let slice = performance.now();
  for (const draw of context.pending) {
    if (performance.now() - slice > SLICE_MS) {
      await breathe();
      slice = performance.now();
      if (renders.get(element) !== current) return; // a newer render replaced this one
    }
    await draw();
  }
}

/** Each text verbatim, numbered (the wire text of a result, as the model reads it). */
export function renderTexts(element, texts, options = {}) {
  prepare(element, options);
  const box = el('div', 'wv-raw');
  texts.forEach((text, index) => box.append(el('div', 'wv-raw-label', `block ${index + 1}`), el('pre', 'wv-pre', text)));
  element.append(box);
}

/** Release what the last render into `element` set up (its charts) and empty it. */
export function clearBlocks(element) {
  for (const dispose of renders.get(element)?.cleanup ?? []) dispose();
  renders.delete(element);
  element.replaceChildren();
}

/** A read-only JSON tree (the viewer's arguments and structuredContent). */
export function renderJson(element, value, options = {}) {
  prepare(element, options);
  element.append(jsonTree(value));
}

function guarded(block, className, render) {
  const box = el('div', className);
  try {
    render(box);
  } catch (error) {
    failed(box, block, error);
  }
  return box;
}

function failed(box, block, error) {
  const name = block.kind === 'ui' ? block.type : block.kind;
  const text = block.kind === 'ui' ? block.body : (block.text ?? JSON.stringify(block, null, 2));
  const reason = error instanceof Error ? error.message : String(error);
  box.replaceChildren(warningCard(text, `This ${name} block could not be rendered (${reason}); shown raw.`));
}

function uiBlock(box, block, context) {
  const { options } = context;
  if (block.title) box.append(el('div', 'wv-block-title', block.title));
  const source = block.lang == null ? block.body : `\`\`\`${block.lang}\n${block.body}\n\`\`\``;
  switch (block.type) {
    case 'echarts': {
      const chartOpts = chartOptions(block.body);
      const slot = box.appendChild(el('div', 'wv-chart-slot'));
      context.pending.push(async () => {
        try {
          context.cleanup.push(drawChart(slot, chartOpts, options.theme));
        } catch (error) {
          failed(box, block, error);
        }
      });
      return;
    }
    case 'markdown':
      box.append(markdownBlock(source));
      return;
    case 'summary':
      box.append(markdownBlock(source, 'wv-summary'));
      return;
    case 'json':
      box.append(jsonTree(JSON.parse(block.body)));
      return;
    case 'mermaid':
      if (options.mermaid) {
        const diagram = box.appendChild(el('div', 'wv-mermaid'));
        context.pending.push(async () => {
          try {
            await options.mermaid(diagram, block.body);
          } catch (error) {
            failed(box, block, error);
          }
        });
      } else {
        box.append(codeBlock('mermaid', block.body));
        const href = options.viewerUrl ? safeUrl(options.viewerUrl) : null;
        if (href) {
          const link = box.appendChild(el('a', 'wv-viewer-link', 'See the diagram in the call viewer'));
          link.href = href;
        }
      }
      return;
    default:
      box.append(codeBlock(block.lang ?? block.type, block.body));
  }
}

function codeBlock(lang, body) {
  const box = el('div', 'wv-code');
  const bar = add(el('div', 'wv-code-bar'), el('span', 'wv-code-lang', lang));
  const copy = el('button', 'wv-copy', 'Copy');
  copy.type = 'button';
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(body);
      copy.textContent = 'Copied';
    } catch {
      copy.textContent = 'Copy failed';
    }
  });
  bar.append(copy);
  return add(box, bar, add(el('pre', 'wv-pre'), el('code', '', body)));
}

function otherBlock(block, options) {
  switch (block.kind) {
    case 'data':
      return dataBlock(block.text);
    case 'raw':
      return rawBlock(block.text);
    case 'llm_directives':
    case 'domain_rules':
      return rulesBlock(block);
    case 'action_suggestions':
      return suggestionsBlock(block, options.suggest ?? null);
    case 'tool_error':
      return toolErrorCard(block);
    case 'validation_error':
      return validationErrorCard(block);
    default:
      return add(el('div'), section(String(block.kind), 'raw'), el('pre', 'wv-pre', JSON.stringify(block, null, 2)));
  }
}
