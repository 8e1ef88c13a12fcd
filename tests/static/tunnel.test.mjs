// The tunnelled page's transport (webapp/embed/tunnel.js) in Node: its XMLHttpRequest stand-in turns engine.io's
// requests into tool calls, and a call whose tunnel's worker cannot be reached now (TUNNEL_UNAVAILABLE) is retried
// with backoff, never taken as the end of the tunnel (TUNNEL_UNKNOWN). Time is the test's (node:test's fake timers).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mock, test } from 'node:test';
import { runInThisContext } from 'node:vm';

const SOURCE = readFileSync(new URL('../../webapp/embed/tunnel.js', import.meta.url), 'utf8');
const ORIGIN = 'https://webapp.tunnel.invalid';
const SOCKET = `${ORIGIN}/_nicegui_ws/socket.io/?client_id=c&EIO=4&transport=polling&sid=s1`;

const error = (code) => ({ isError: true, content: [{ type: 'text', text: `<tool_error code="${code}">…</tool_error>` }] });
const answer = (body) => ({ structuredContent: { status: 200, body, parts: 1, answer: 1 } });

// A page with the tunnel installed: `calls` are the tool calls sent to the shell, `shell` its other messages.
const page = () => {
  globalThis.window = { XMLHttpRequest: class {} };
  globalThis.location = { href: `${ORIGIN}/` };
  runInThisContext(SOURCE);
  const calls = [];
  const shell = [];
  const tunnel = window.__webappTunnel({ origin: ORIGIN, tunnel: 'T' }, (message) =>
    message.t === 'req' ? calls.push(message) : shell.push(message),
  );
  const reply = (result, index = calls.length - 1) => tunnel.answers({ t: 'res', id: calls[index].id, result });
  return { calls, shell, reply, XHR: window.XMLHttpRequest };
};

const sent = (XHR, method, body) => {
  const xhr = new XHR();
  const done = new Promise((resolve) => (xhr.onreadystatechange = () => xhr.readyState === 4 && resolve(xhr)));
  xhr.open(method, SOCKET);
  xhr.send(body);
  return done;
};

const settle = async () => {
  for (let turn = 0; turn < 20; turn++) await Promise.resolve();
};

test('a GET whose tunnel cannot be reached now is sent again after 0.25 s, then 0.5 s, and answers once it passes', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const { calls, shell, reply, XHR } = page();
    const done = sent(XHR, 'GET');
    await settle();
    reply(error('TUNNEL_UNAVAILABLE'));
    await settle();
    assert.equal(calls.length, 1);
    mock.timers.tick(249);
    await settle();
    assert.equal(calls.length, 1); // not before its pause
    mock.timers.tick(1);
    await settle();
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1].params.arguments, calls[0].params.arguments);
    reply(error('TUNNEL_UNAVAILABLE'));
    await settle();
    mock.timers.tick(500);
    await settle();
    assert.equal(calls.length, 3);
    reply(answer('2'));
    const xhr = await done;
    assert.equal(xhr.status, 200);
    assert.equal(xhr.responseText, '2');
    assert.deepEqual(shell, []); // the tunnel goes on
  } finally {
    mock.timers.reset();
  }
});

test('a GET still unreachable after five retries ends the tunnel, and the shell shows its card', async () => {
  mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const { calls, shell, reply, XHR } = page();
    const done = sent(XHR, 'GET');
    for (const pause of [250, 500, 1000, 2000, 4000]) {
      await settle();
      reply(error('TUNNEL_UNAVAILABLE'));
      await settle();
      mock.timers.tick(pause);
    }
    await settle();
    reply(error('TUNNEL_UNAVAILABLE'));
    assert.equal((await done).status, 0);
    assert.equal(calls.length, 6);
    assert.deepEqual(shell, [{ t: 'tunnel-gone' }]);
    sent(XHR, 'GET');
    await settle();
    assert.equal(calls.length, 6); // nothing is sent once the tunnel ended
  } finally {
    mock.timers.reset();
  }
});

test('a POST whose tunnel cannot be reached now is not sent again (it may have run) and does not end the tunnel', async () => {
  const { calls, shell, reply, XHR } = page();
  const done = sent(XHR, 'POST', '42["event",{}]');
  await settle();
  reply(error('TUNNEL_UNAVAILABLE'));
  assert.equal((await done).status, 0); // engine.io's reconnect takes over, as after a lost HTTP POST
  assert.equal(calls.length, 1);
  assert.deepEqual(shell, []);
});

test('an unknown tunnel ends at once, without a retry', async () => {
  const { calls, shell, reply, XHR } = page();
  const done = sent(XHR, 'GET');
  await settle();
  reply(error('TUNNEL_UNKNOWN'));
  assert.equal((await done).status, 0);
  assert.equal(calls.length, 1);
  assert.deepEqual(shell, [{ t: 'tunnel-gone' }]);
});

test('the parts of a long answer are fetched by the answer they belong to', async () => {
  const { calls, reply, XHR } = page();
  const done = sent(XHR, 'GET');
  await settle();
  reply({ structuredContent: { status: 200, body: 'a', parts: 3, answer: 7 } });
  await settle();
  assert.deepEqual(
    calls.slice(1).map((call) => call.params.arguments),
    [
      { tunnel: 'T', answer: 7, part: 1 },
      { tunnel: 'T', answer: 7, part: 2 },
    ],
  );
  reply({ structuredContent: { status: 200, body: 'c', parts: 3, answer: 7 } }, 2);
  reply({ structuredContent: { status: 200, body: 'b', parts: 3, answer: 7 } }, 1);
  assert.equal((await done).responseText, 'abc');
});
