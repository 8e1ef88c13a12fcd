// The result widget `ui://webapp/result` (rendering.md §4): an MCP Apps host shows it under a tool call; it draws
// the call's result — charts, tables, error cards, suggestions — from the result's text content with the same parser
// and renderer as the viewer. Everything it needs is in this one page: it makes no request, stores nothing.

import { renderBlocks } from '../render/index.js';
import { parseBlocks } from '../wire.js';
import { HostChannel } from './host.js';

const APP_INFO = { name: 'webapp-result', version: '1' };
const root = document.getElementById('webapp-result');
const config = JSON.parse(document.getElementById('webapp-result-config')?.textContent || '{}'); // set by the server
let shown = null; // the blocks on screen, drawn again when the host's theme changes
let reportedHeight = 0;
let sizeFrame = 0;

const channel = new HostChannel(onNotification, () => {
  shown = null;
  root.replaceChildren();
});

function status(state, text) {
  root.dataset.state = state;
  const line = document.createElement('div');
  line.className = `wr-status wr-${state}`;
  line.dataset.testid = 'widget-status';
  if (state === 'working') line.append(Object.assign(document.createElement('span'), { className: 'wr-spinner' }));
  line.append(text);
  root.replaceChildren(line);
}

function toolName() {
  const info = channel.context.toolInfo;
  return (info && info.tool && info.tool.name) || '';
}

/** The call viewer, filtered to this call's tool: Mermaid diagrams, which the widget leaves out, are drawn there. */
function viewerUrl() {
  if (!config.viewerUrl) return undefined;
  const tool = toolName();
  return tool ? `${config.viewerUrl}?${new URLSearchParams({ tool })}` : config.viewerUrl;
}

function applyTheme() {
  const theme = channel.context.theme === 'dark' ? 'dark' : 'light';
  document.documentElement.dataset.theme = theme; // our <html> may be the host's: set from here, not in markup
  document.documentElement.style.colorScheme = theme;
  root.dataset.theme = theme;
  return theme;
}

/** A result marked as an error whose text is no error envelope still shows as an error card. */
function errorBlocks(blocks) {
  if (blocks.length && (blocks[0].kind === 'tool_error' || blocks[0].kind === 'validation_error')) return blocks;
  const message = blocks.length && typeof blocks[0].text === 'string' ? blocks[0].text : 'The tool reported an error.';
  const card = { code: null, severity: null, message, recovery: null, available_actions: [], actions_inline: false };
  return [{ ...card, details: [], retry_after: null, kind: 'tool_error' }, ...blocks.slice(1)];
}

async function openLink(url) {
  if (channel.capabilities.openLinks) {
    try {
      const answer = await channel.request('ui/open-link', { url });
      if (!answer.isError) return;
    } catch {
      // shown below
    }
  }
  notice(`This host does not open links from here: ${url}`);
}

async function suggest(tool, reason) {
  const why = String(reason || '').replace(/[\s.]+$/u, '');
  const text = `Please call ${tool}${why ? ` (${why})` : ''}.`;
  try {
    await channel.request('ui/message', { role: 'user', content: [{ type: 'text', text }] });
    notice(`Asked the assistant to call ${tool}.`);
  } catch (error) {
    notice(`The host did not take the message: ${error.message}`);
  }
}

function notice(text) {
  let line = root.querySelector('.wr-notice');
  if (!line) {
    line = Object.assign(document.createElement('div'), { className: 'wr-notice' });
    line.dataset.testid = 'widget-notice';
    line.setAttribute('role', 'status');
    root.append(line);
  }
  line.textContent = text;
}

async function draw(blocks) {
  shown = blocks;
  const styles = channel.context.styles || {};
  await renderBlocks(root, blocks, {
    theme: applyTheme(),
    variables: styles.variables || {},
    openLink,
    suggest: channel.capabilities.message ? suggest : null,
    viewerUrl: viewerUrl(),
  });
}

async function showResult(result) {
  const started = performance.now();
  const texts = (result.content || []).filter((item) => item && item.type === 'text').map((item) => item.text);
  let blocks = parseBlocks(texts);
  if (result.isError) blocks = errorBlocks(blocks);
  root.replaceChildren();
  try {
    await draw(blocks);
    root.dataset.state = result.isError ? 'error' : 'rendered';
  } catch (error) {
    status('failed', `This result could not be shown: ${error.message}`);
  }
  await new Promise((resolve) => requestAnimationFrame(resolve));
  root.dataset.renderMs = (performance.now() - started).toFixed(1); // the first render's time, for a person's look
}

function onNotification(method, params) {
  if (method === 'ui/notifications/tool-input') {
    const name = toolName();
    status('working', name ? `Working… (${name})` : 'Working…');
  } else if (method === 'ui/notifications/tool-result') {
    showResult(params);
  } else if (method === 'ui/notifications/tool-cancelled') {
    status('cancelled', `The call was cancelled${params.reason ? `: ${params.reason}` : '.'}`);
  } else if (method === 'ui/notifications/host-context-changed') {
    applyTheme();
    if (shown && (params.theme || params.styles)) draw(shown);
  }
}

function reportSize() {
  sizeFrame = 0;
  const height = Math.ceil(root.getBoundingClientRect().height);
  if (height > 0 && height !== reportedHeight) {
    reportedHeight = height;
    channel.notify('ui/notifications/size-changed', { height });
  }
}

new ResizeObserver(() => {
  if (!sizeFrame) sizeFrame = requestAnimationFrame(reportSize);
}).observe(root);

status('starting', 'Waiting for the result…');
channel.initialize(APP_INFO).then(applyTheme, (error) => status('failed', `The host did not start the view: ${error.message}`));
