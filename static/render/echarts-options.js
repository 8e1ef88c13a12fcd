// ECharts options from a result made safe to draw: nothing in them may run script or write HTML. Pure: runs in Node.

export const CHART_TYPES = new Set(['bar', 'line', 'pie', 'scatter']);

/**
 * A copy of ECharts options that cannot run script in the browser: drops every key starting with `:` (NiceGUI and
 * similar wrappers evaluate those as JavaScript) and `__proto__`, tooltips render on the canvas (`renderMode:
 * 'richText'`, so a formatter string is never parsed as HTML) without `extraCssText`, the toolbox's data view (it
 * writes its texts as HTML) and `link`/`sublink` (ECharts opens them itself) go, and so do images (`image` keys,
 * `image://` symbols), which would be fetched from anywhere. Animation is off unless the options turn it on:
 * results are shown, not presented.
 */
export function sanitizeEcharts(options) {
  const cleaned = clean(options, null);
  if (isObject(cleaned) && !('animation' in cleaned)) cleaned.animation = false;
  return cleaned;
}

/** The series types a chart uses that this renderer does not draw (an empty list when it draws them all). */
export function unsupportedSeries(options) {
  const series = options.series === undefined ? [] : [options.series].flat();
  return series.map((item) => (isObject(item) ? item.type : undefined)).filter((type) => !CHART_TYPES.has(type));
}

const DROPPED = new Set(['dataView', 'link', 'sublink', 'extraCssText', 'image', '__proto__']);

function clean(value, key) {
  if (Array.isArray(value)) return value.map((item) => clean(item, key));
  if (!isObject(value)) return value;
  const cleaned = {};
  for (const [name, item] of Object.entries(value)) {
    if (name.startsWith(':') || DROPPED.has(name) || isImageUrl(item)) continue;
    cleaned[name] = clean(item, name);
  }
  if (key === 'tooltip') cleaned.renderMode = 'richText';
  return cleaned;
}

function isImageUrl(value) {
  return typeof value === 'string' && value.trim().toLowerCase().startsWith('image://');
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
