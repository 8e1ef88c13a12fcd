// The viewer's entry (/static/dist/viewer.js): results drawn from their wire text with the parser and the renderer,
// Mermaid included (the result widget leaves it out), and a call's detail.

import DOMPurify from 'dompurify';

import { clearBlocks, renderBlocks, renderJson, renderTexts } from '../render/index.js';
import { parseBlocks } from '../wire.js';
import { renderCall } from './detail.js';

let diagrams = 0;

async function drawMermaid(theme, element, source) {
  const { default: mermaid } = await import('mermaid'); // loaded by the first diagram, not with the page
  mermaid.initialize({
    startOnLoad: false,
    securityLevel: 'strict', // HTML in labels encoded, click handlers off
    htmlLabels: false, // labels as SVG text: no HTML in a diagram at all
    flowchart: { htmlLabels: false },
    theme: theme === 'dark' ? 'dark' : 'default',
  });
  diagrams += 1;
  const { svg } = await mermaid.render(`wv-mermaid-${diagrams}`, source);
  element.append(DOMPurify.sanitize(svg, { USE_PROFILES: { svg: true, svgFilters: true }, RETURN_DOM_FRAGMENT: true }));
}

function options(theme, suggest) {
  return {
    theme,
    suggest,
    openLink: (url) => window.open(url, '_blank', 'noopener,noreferrer'),
    mermaid: (target, source) => drawMermaid(theme, target, source),
  };
}

/** Draw a result (its text contents) into `element`. */
export function renderResult(element, texts, { theme = 'light', suggest = null } = {}) {
  return renderBlocks(element, parseBlocks(texts), options(theme, suggest));
}

/** Draw a call's detail (header, result, arguments, structured content) into `element`. */
export function showCall(element, call, { theme = 'light', suggest = null } = {}) {
  return renderCall(element, call, options(theme, suggest));
}

export { clearBlocks, parseBlocks, renderBlocks, renderJson, renderTexts };
