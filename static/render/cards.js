// The blocks that are not UI blocks: the data block, error cards, directives and rules, suggestions, raw text.

import { add, el } from './dom.js';
import { jsonTree } from './json-tree.js';

const KNOWN_TAGS = ['<ui_passthrough', '<llm_directives>', '<domain_rules>', '<action_suggestions>', '<tool_error', '<validation_error'];
const SECTION_TITLES = { llm_directives: 'LLM directives — for the model', domain_rules: 'Domain rules — for the model' };

export function section(title, kind) {
  return el('div', `wv-section-title wv-section-${kind}`, title);
}

/** A warning that a block could not be drawn, with its text. */
export function warningCard(text, warning) {
  const card = el('div', 'wv-card wv-warning-card');
  add(card, add(el('div', 'wv-card-head'), el('span', 'wv-icon wv-icon-warning', '⚠'), el('span', 'wv-warning-text', warning)));
  card.append(el('pre', 'wv-pre', text));
  return card;
}

export function dataBlock(text) {
  const box = el('div');
  box.append(section('Data', 'data'));
  let value;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  box.append(typeof value === 'object' && value !== null ? jsonTree(value) : el('pre', 'wv-pre wv-data-text', text));
  return box;
}

export function rawBlock(text) {
  if (KNOWN_TAGS.some((tag) => text.startsWith(tag))) {
    const tag = text.slice(1).split('>', 1)[0].split(' ', 1)[0];
    return warningCard(text, `This block looks like <${tag}> but does not follow the format; shown raw.`);
  }
  return add(el('div'), section('Raw block', 'raw'), el('pre', 'wv-pre', text));
}

export function rulesBlock(block) {
  const list = el('ul', `wv-items wv-${block.kind}`);
  for (const item of block.items) list.append(add(el('li'), el('span', 'wv-item-text', item)));
  return add(el('div', 'wv-for-model'), section(SECTION_TITLES[block.kind] ?? block.kind, block.kind), list);
}

export function suggestionsBlock(block, suggest) {
  const list = el('ul', 'wv-items wv-action_suggestions');
  for (const item of block.items) {
    const chip = el(suggest ? 'button' : 'span', 'wv-tool-chip', item.tool);
    if (suggest) {
      chip.type = 'button';
      chip.title = 'Try this tool';
      chip.addEventListener('click', () => suggest(item.tool, item.reason));
    }
    list.append(add(el('li', 'wv-suggestion'), chip, el('span', 'wv-item-text', item.reason)));
  }
  return add(el('div'), section('Action suggestions', 'action_suggestions'), list);
}

function field(name, value, mono = false) {
  return add(el('div', 'wv-field'), el('span', 'wv-field-name', name), el('span', `wv-field-value${mono ? ' wv-mono' : ''}`, value));
}

function errorHead(icon, kind, badges) {
  const head = add(el('div', 'wv-card-head'), el('span', 'wv-icon wv-error-icon', icon), el('span', 'wv-error-kind', kind));
  for (const [text, extra] of badges) head.append(el('span', `wv-badge${extra}`, text));
  return head;
}

export function toolErrorCard(block) {
  const severity = block.severity ?? 'error';
  const card = el('div', `wv-card wv-error-card wv-severity-${severity}`);
  const badges = [];
  if (block.code !== null) badges.push([block.code, ' wv-code-badge']);
  if (block.severity !== null) badges.push([block.severity, '']);
  card.append(errorHead(severity === 'warning' ? '⚠' : '✕', 'Tool error', badges));
  card.append(field('message', block.message));
  if (block.recovery !== null) card.append(field('recovery', block.recovery));
  if (block.available_actions.length) card.append(field('available actions', block.available_actions.join(', '), true));
  for (const [key, value] of block.details) card.append(field(`detail · ${key}`, value));
  if (block.retry_after !== null) card.append(field('retry after', `${formatSeconds(block.retry_after)} seconds`));
  return card;
}

export function validationErrorCard(block) {
  const card = el('div', 'wv-card wv-error-card wv-severity-error');
  card.append(errorHead('✕', 'Validation error', [[block.action, ' wv-code-badge']]));
  for (const problem of block.fields) card.append(field(problem.name, problem.text));
  card.append(field('recovery', block.recovery));
  return card;
}

// As Python's `f"{x:g}"`: up to 6 significant digits, no trailing zeros.
function formatSeconds(value) {
  return String(Number(value.toPrecision(6)));
}
