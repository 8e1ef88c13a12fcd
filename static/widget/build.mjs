// The result widget's entry in static/build.mjs: main.js bundled by esbuild (parser, renderer, ECharts' subset,
// markdown-it, DOMPurify), then inlined with index.html's styles into ONE page, static/dist/widget.html, that makes
// no request of its own.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WIDGET_LIMIT_BYTES = 1_200_000; // rendering.md §4: the page stays under 1.2 MB
const here = (name) => fileURLToPath(new URL(name, import.meta.url));
const PLACEHOLDER = '/*__WIDGET_SCRIPT__*/';

/** Inline the bundled script into the page template and write `outfile`; returns the page's size in bytes. */
export async function writeWidget(result, outfile) {
  // inside <script> only `</script` would end the element early; `<\/script` means the same in strings and regexes
  const script = result.outputFiles[0].text.replace(/<\/(script)/giu, '<\\/$1');
  if (/<script/iu.test(script)) throw new Error('the widget bundle contains "<script", which would break its page');
  const template = await readFile(here('index.html'), 'utf8');
  if (!template.includes(PLACEHOLDER)) throw new Error(`${here('index.html')} lost its ${PLACEHOLDER} marker`);
  const page = template.replace(PLACEHOLDER, () => script);
  await mkdir(dirname(outfile), { recursive: true });
  await writeFile(outfile, page);
  const bytes = Buffer.byteLength(page);
  if (bytes > WIDGET_LIMIT_BYTES) console.warn(`widget.html is ${bytes} bytes, over its ${WIDGET_LIMIT_BYTES} limit`);
  return bytes;
}

/** The esbuild options of the widget (on top of static/build.mjs' common ones) and what to do with its output. */
export function widgetBundle(dist) {
  return {
    entryPoints: [here('main.js')],
    format: 'iife', // one classic inline script: hosts put our HTML inside their own document
    platform: 'browser',
    charset: 'utf8',
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    after: (result) => writeWidget(result, `${dist}/widget.html`),
  };
}
