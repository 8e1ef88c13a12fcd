// ECharts blocks: the core with the subset results use (bar, line, pie, scatter and their components), on canvas.

import { BarChart, LineChart, PieChart, ScatterChart } from 'echarts/charts';
import {
  DatasetComponent,
  GridComponent,
  LegendComponent,
  TitleComponent,
  TooltipComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

import { el } from './dom.js';
import { sanitizeEcharts, unsupportedSeries } from './echarts-options.js';

echarts.use([
  BarChart,
  LineChart,
  PieChart,
  ScatterChart,
  DatasetComponent,
  GridComponent,
  LegendComponent,
  TitleComponent,
  TooltipComponent,
  CanvasRenderer,
]);

/** Parse and check a chart's JSON options; throws with a reason a person can act on. */
export function chartOptions(body) {
  const options = JSON.parse(body);
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new Error('ECharts options must be a JSON object');
  }
  const missing = unsupportedSeries(options);
  if (missing.length) {
    throw new Error(`series type ${missing.map((t) => JSON.stringify(t ?? null)).join(', ')} is not drawn here`);
  }
  return sanitizeEcharts(options);
}

/** Draw `options` (already checked) into a new `.wv-chart` box inside `parent`; returns a disposer. */
export function drawChart(parent, options, theme) {
  const box = el('div', 'wv-chart');
  parent.append(box);
  const chart = echarts.init(box, theme === 'dark' ? 'dark' : null, { renderer: 'canvas' });
  chart.setOption({ backgroundColor: 'transparent', ...options });
  const observer = new ResizeObserver(() => chart.resize());
  observer.observe(box);
  return () => {
    observer.disconnect();
    chart.dispose();
  };
}
