// The result widget's page assembly (static/widget/build.mjs): the bundle goes inline into the template's one
// <script> without ever ending it early, and a bundle that would break the page fails the build.

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { writeWidget } from '../../static/widget/build.mjs';

const bundle = (text) => ({ outputFiles: [{ text }] });

test('the bundle is inlined once, with every </script escaped and $ patterns kept as they are', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'widget-'));
  try {
    const outfile = join(folder, 'dist', 'widget.html');
    const text = 'const a = "</script>", b = "</SCRIPT >", c = "$&$1$$";';
    const bytes = await writeWidget(bundle(text), outfile);
    const page = await readFile(outfile, 'utf8');
    assert.equal(bytes, Buffer.byteLength(page));
    assert.ok(page.includes('const a = "<\\/script>", b = "<\\/SCRIPT >", c = "$&$1$$";'));
    const template = await readFile(new URL('../../static/widget/index.html', import.meta.url), 'utf8');
    assert.equal(page.match(/<\/script>/giu).length, template.match(/<\/script>/giu).length); // the template's own
    assert.ok(page.includes('id="webapp-result"') && !page.includes('__WIDGET_SCRIPT__'));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test('a bundle that opens a script element fails the build', async () => {
  await assert.rejects(writeWidget(bundle('const a = "<script>";'), join(tmpdir(), 'never.html')), /"<script"/u);
});
