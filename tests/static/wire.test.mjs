// Parity of static/wire.js with webapp.wire.parse_blocks: the wire vectors, edge cases and thousands of seeded
// mutations of them go through both parsers and must give the same blocks. Python runs once, in a child process
// ($WIRE_PARITY_PYTHON, else .venv/bin/python) running parse_blocks.py beside this file.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";

import { parseBlocks } from "../../static/wire.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const PYTHON = process.env.WIRE_PARITY_PYTHON ?? `${REPO}.venv/bin/python`;
const HELPER = fileURLToPath(new URL("parse_blocks.py", import.meta.url));
const CASES = JSON.parse(readFileSync(new URL("../data/wire-vectors.json", import.meta.url), "utf8")).cases;
const GENERATED = 20_000;
const SEED = 0x5eed19;

const VECTORS = CASES.flatMap((c) => (c.input.kind === "parse" ? [c.input.content] : []).concat([c.expect.content]));
const ui = (attrs, content = "```json\n{}\n```") => `<ui_passthrough ${attrs}>\n${content}\n</ui_passthrough>`;
const retry = (value) =>
  `<tool_error code="BUSY">\n<message>Busy</message>\n<retry_after>${value} seconds</retry_after>\n</tool_error>`;
const EDGES = [
  ...["5", "1.5", "1e3", "1e+21", "1.5e+300", "1152921504606846976", "1152921504606847000", "0.1", "1e400"].map(
    (value) => ["{}", retry(value)],
  ),
  ...["-0", "05", ".5", "5.", "+5", "--5", "1e", "-1e-7", "0.000001", "1e-7", "123456789012345678901234"].map(
    (value) => [retry(value), retry(value)],
  ),
  ...["007", "-0", "-3", "12345678901234567890", "\u0663", "1\u0663"].map((priority) => [
    "[]",
    ui(`type="chart" priority="${priority}"`),
  ]),
  ["", ui('type="" title=""'), ui('type="x" width="wide"'), ui('type="&amp;&lt;&quot;" title="&apos;&gt;"', "")],
  ["x", ui('type="x"', "```\n```"), ui('type="x"', "```js\n\n```"), ui('type="x"', "```a`b\nbody\n```")],
  ["x", ui('type="x">'), ui('type="x"', "```js\nbody\n```\n")],
  ["\ud800", ui('type="\udfff"', "\ud83d"), "<llm_directives>\n- \udc00\n</llm_directives>"],
  ["<tool_error>\n<message></message>\n<available_actions></available_actions>\n</tool_error>"],
  ["<tool_error>\n<message>m</message>\n<recovery></recovery>\n</tool_error>", "<tool_error>\n<message>m</message>"],
  ['<validation_error action="a">\n<recovery></recovery>\n</validation_error>', "<validation_error action=\"a\">"],
  ["{}", "<action_suggestions>\n- no separator\n</action_suggestions>", "<domain_rules>\n- \n- \n</domain_rules>"],
  ["{}", "<llm_directives>\n</llm_directives>", "<domain_rules>\n-\n</domain_rules>"],
  ["{}", "<action_suggestions>\n- a: b: c\n- d:e: f\n</action_suggestions>", ui('type="&amp;apos;&amp;lt;"')],
  ['<tool_error code="&amp;quot;">\n<message>&amp;lt;</message>\n<recovery>&amp;amp;</recovery>\n</tool_error>'],
  [
    "{}",
    "<action_suggestions>\n- a: \n</action_suggestions>",
    "<action_suggestions>\n- a: b\n- c\n</action_suggestions>",
  ],
];

const SNIPPETS = [
  '<ui_passthrough type="x">\n', "\n</ui_passthrough>", '<tool_error code="E">\n', "</tool_error>", "<message>",
  "</message>\n", "<recovery>", "</recovery>\n", "<available_actions>\n", "  <action>a</action>\n", "<details>\n",
  '  <detail key="k">v</detail>\n', "<retry_after>1.5 seconds</retry_after>\n", '<validation_error action="a">\n',
  '<field name="f">', "</field>\n", "<llm_directives>\n- ", "<domain_rules>\n", "\n</domain_rules>",
  "<action_suggestions>\n- ", "\n- ", ": ", ", ", ' priority="2"', ' width="half"', ' title="T"', "```", "```json\n",
  "\n```", "`", '"', "'", "&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&", "<", ">", "&amp;lt;",
  "&amp;apos;", "\u{1F600}", "\u{1F469}\u200D\u{1F4BB}", "\u{1F1E9}\u{1F1EA}", "\u2028", "\u2029", "\x85", "\r", "\n",
  "\r\n", "\x0b", "\x0c", "\x1c", "\u0663", "0", "-", ".", "e",
];
const STRUCTURAL = new Set(["\n", '"', ">", "<", "`", ":", "&"]);

function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(bases, count, seed) {
  const random = mulberry32(seed);
  const pick = (items) => items[Math.floor(random() * items.length)];
  const at = (length) => Math.floor(random() * (length + 1));
  // A place to cut or insert, by code point: half of the time next to markup, where the parser decides things.
  const place = (points) => {
    const marks = points.flatMap((point, index) => (STRUCTURAL.has(point) ? [index, index + 1] : []));
    return marks.length && random() < 0.5 ? pick(marks) : at(points.length);
  };
  const mutations = [
    (texts, i) => {
      const points = Array.from(texts[i]);
      texts[i] = points.slice(0, place(points)).join("");
    },
    (texts, i) => {
      const points = Array.from(texts[i]);
      points.splice(place(points), 0, pick(SNIPPETS));
      texts[i] = points.join("");
    },
    (texts, i) => {
      texts[i] = texts[i].replaceAll("\n", "\r\n");
    },
    (texts, i) => texts.splice(i, 1),
    (texts, i) => texts.splice(at(texts.length), 0, texts[i]),
    (texts) => {
      const other = pick(bases);
      texts.splice(at(texts.length), 0, other.length ? pick(other) : "");
    },
  ];
  return Array.from({ length: count }, () => {
    const texts = [...pick(bases)];
    for (let steps = 1 + Math.floor(random() * 3); steps > 0; steps--) {
      const mutate = pick(mutations);
      if (texts.length) mutate(texts, Math.floor(random() * texts.length));
      else texts.push(pick(SNIPPETS));
    }
    return texts;
  });
}

function pythonParse(results) {
  const run = spawnSync(PYTHON, ["-B", HELPER], {
    cwd: REPO,
    input: JSON.stringify(results),
    encoding: "utf8",
    maxBuffer: 1 << 30,
    timeout: 120_000,
  });
  assert.equal(run.error, undefined, `${PYTHON} did not run: ${run.error}`);
  assert.equal(run.status, 0, `${PYTHON} ${HELPER} failed:\n${run.stderr}`);
  return JSON.parse(run.stdout);
}

function assertParity(results, expected, label) {
  assert.equal(expected.length, results.length);
  results.forEach((texts, index) => {
    const actual = parseBlocks(texts);
    if (isDeepStrictEqual(actual, expected[index])) return;
    const show = (value) => JSON.stringify(value).slice(0, 4000);
    assert.deepStrictEqual(
      actual,
      expected[index],
      `${label} #${index}: wire.js and parse.py disagree\ninput:   ${show(texts)}\n` +
        `wire.js: ${show(actual)}\nPython:  ${show(expected[index])}`,
    );
  });
}

const GENERATED_RESULTS = generate([...VECTORS, ...EDGES], GENERATED, SEED);
const ALL = [...VECTORS, ...EDGES, ...GENERATED_RESULTS];
const PYTHON_BLOCKS = pythonParse(ALL);
const part = (start, length) => PYTHON_BLOCKS.slice(start, start + length);

test("every wire-vectors result parses in JavaScript as in Python", () => {
  assertParity(VECTORS, part(0, VECTORS.length), "wire vector");
});

test("parse vectors give the blocks the vectors expect", () => {
  for (const c of CASES.filter((c) => c.input.kind === "parse")) {
    assert.deepStrictEqual(parseBlocks(c.input.content), c.expect.parsed, c.id);
  }
});

test("numbers, attributes, empty parts and lone surrogates parse as in Python", () => {
  assertParity(EDGES, part(VECTORS.length, EDGES.length), "edge case");
});

test("thousands of mutated results parse as in Python", () => {
  assertParity(GENERATED_RESULTS, part(VECTORS.length + EDGES.length, GENERATED), `generated (seed ${SEED})`);
});

test("an envelope of 250,000 actions or fields parses, more than a call's arguments could hold", () => {
  const many = 250_000;
  const actions = "  <action>a</action>\n".repeat(many);
  const fields = '<field name="f">t</field>\n'.repeat(many);
  const [error, validation] = parseBlocks([
    `<tool_error>\n<message>m</message>\n<available_actions>\n${actions}</available_actions>\n</tool_error>`,
    `<validation_error action="a">\n${fields}<recovery>r</recovery>\n</validation_error>`,
  ]);
  assert.equal(error.available_actions.length, many);
  assert.equal(validation.fields.length, many);
});

test("the mutated results reach every block kind, recognised and not", () => {
  const kinds = new Set(part(VECTORS.length + EDGES.length, GENERATED).flatMap((blocks) => blocks.map((b) => b.kind)));
  const every = ["data", "raw", "ui", "llm_directives", "domain_rules", "action_suggestions"];
  assert.deepStrictEqual([...kinds].sort(), [...every, "tool_error", "validation_error"].sort());
});

test("parseBlocks takes MCP text content items as well as strings", () => {
  assert.deepStrictEqual(parseBlocks([{ type: "text", text: "{}" }, "<domain_rules>\n- R\n</domain_rules>"]), [
    { text: "{}", kind: "data" },
    { kind: "domain_rules", items: ["R"] },
  ]);
});
