// The renderer's pure parts in Node: ECharts options made safe, the display order of blocks, unsupported series.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { sanitizeEcharts, unsupportedSeries } from '../../static/render/echarts-options.js';
import { displayOrder } from '../../static/render/order.js';
import { parseBlocks } from '../../static/wire.js';

test('sanitizing echarts drops colon keys at every depth', () => {
  const options = {
    ':formatter': 'alert(1)',
    series: [{ type: 'bar', label: { ':formatter': 'x', show: true }, data: [1, 2] }],
    xAxis: { axisLabel: { ':formatter': 'y', rotate: 30 } },
  };
  assert.deepEqual(sanitizeEcharts(options), {
    series: [{ type: 'bar', label: { show: true }, data: [1, 2] }],
    xAxis: { axisLabel: { rotate: 30 } },
    animation: false,
  });
});

test('sanitizing echarts renders tooltips on the canvas and drops html features and links', () => {
  const options = {
    tooltip: { formatter: '<img src=x onerror=alert(1)>', extraCssText: 'background: url(x)' },
    title: { text: 't', link: 'javascript:alert(1)', sublink: 'https://example.org/' },
    toolbox: { feature: { dataView: { lang: ['<b>x</b>'] }, saveAsImage: {} } },
    series: [{ type: 'line', tooltip: { show: true } }],
  };
  const cleaned = sanitizeEcharts(options);
  assert.deepEqual(cleaned.tooltip, { formatter: '<img src=x onerror=alert(1)>', renderMode: 'richText' });
  assert.deepEqual(cleaned.title, { text: 't' });
  assert.deepEqual(cleaned.toolbox, { feature: { saveAsImage: {} } });
  assert.equal(cleaned.series[0].tooltip.renderMode, 'richText');
});

test('images, which would be fetched from anywhere, are dropped', () => {
  const options = {
    backgroundColor: { image: 'https://example.org/track.png', repeat: 'repeat' },
    series: [{ type: 'scatter', symbol: 'image://https://example.org/t.png', itemStyle: { color: 'red' } }],
    graphic: [{ type: 'image', style: { image: 'https://example.org/x.png' } }],
  };
  assert.deepEqual(sanitizeEcharts(options), {
    backgroundColor: { repeat: 'repeat' },
    series: [{ type: 'scatter', itemStyle: { color: 'red' } }],
    graphic: [{ type: 'image', style: {} }],
    animation: false,
  });
});

test('a __proto__ key in the options never reaches the prototype', () => {
  const cleaned = sanitizeEcharts(JSON.parse('{"__proto__": {"polluted": 1}, "series": [{"__proto__": {"x": 1}}]}'));
  assert.equal(Object.getPrototypeOf(cleaned), Object.prototype);
  assert.equal(cleaned.polluted, undefined);
  assert.equal({}.polluted, undefined);
  assert.equal(cleaned.series[0].x, undefined);
});

test('animation stays on only when the options ask for it', () => {
  assert.equal(sanitizeEcharts({ animation: true }).animation, true);
  assert.equal(sanitizeEcharts({}).animation, false);
});

test('sanitizing leaves the original options untouched', () => {
  const options = { ':a': 1, b: { ':c': 2 } };
  sanitizeEcharts(options);
  assert.deepEqual(options, { ':a': 1, b: { ':c': 2 } });
});

test('series types outside the drawn subset are named', () => {
  assert.deepEqual(unsupportedSeries({ series: [{ type: 'bar' }, { type: 'radar' }, {}] }), ['radar', undefined]);
  assert.deepEqual(unsupportedSeries({ series: { type: 'pie' } }), []);
  assert.deepEqual(unsupportedSeries({}), []);
});

function ui(type, priority) {
  const attribute = priority === null ? '' : ` priority="${priority}"`;
  return `<ui_passthrough type="${type}"${attribute}>\nx\n</ui_passthrough>`;
}

function kinds(blocks) {
  return blocks.map((block) => (block.kind === 'ui' ? block.type : block.kind));
}

test('ui blocks are shown by priority, then those without one in their order', () => {
  const texts = ['{}', ui('a', null), ui('b', 2), ui('c', null), ui('d', -1), '<domain_rules>\n- r\n</domain_rules>'];
  assert.deepEqual(kinds(displayOrder(parseBlocks(texts))), ['data', 'd', 'b', 'a', 'c', 'domain_rules']);
});

test('embedded ui blocks join the ui group', () => {
  const texts = ['{}', ui('parent', 5), '<domain_rules>\n- r\n</domain_rules>', ui('child', 1)];
  assert.deepEqual(kinds(displayOrder(parseBlocks(texts))), ['data', 'child', 'parent', 'domain_rules']);
});
