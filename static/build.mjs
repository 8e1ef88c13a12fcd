// Builds the browser bundles into static/dist/ with esbuild (run by `make`; never by the server or the tests).
// Each entry of BUNDLES is one esbuild build; add an entry for another output.

import { execFileSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

import { widgetBundle } from './widget/build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');

const common = {
  absWorkingDir: here,
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  loader: { '.css': 'text' }, // the renderer injects its own styles
  logLevel: 'warning',
};

export const BUNDLES = [
  // The viewer's entry, loaded by /viewer from /static/dist/viewer.js; Mermaid's diagram types load as chunks.
  { entryPoints: { viewer: 'viewer/main.js' }, outdir: dist, splitting: true, chunkNames: 'chunks/[name]-[hash]' },
  // The MCP Apps result widget: one self-contained page, static/dist/widget.html (served as ui://webapp/result).
  widgetBundle(dist),
];

await rm(dist, { recursive: true, force: true });
for (const options of BUNDLES) {
  const { after, ...esbuildOptions } = options;
  const result = await build({ ...common, ...esbuildOptions });
  if (after) await after(result);
}

// The pages' stylesheet (static/styles/pages.css): Tailwind's classes the framework and the views use, compiled here
// once instead of by Tailwind's compiler in every tab.
const tailwind = join(here, '..', 'node_modules', '@tailwindcss', 'cli', 'dist', 'index.mjs');
const styles = ['-i', join(here, 'styles', 'pages.css'), '-o', join(dist, 'pages.css'), '--minify'];
execFileSync(process.execPath, [tailwind, ...styles], { stdio: ['ignore', 'ignore', 'pipe'] }); // throws with its output
