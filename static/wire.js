// The wire parser for the browser: parseBlocks(texts) gives, for every array of strings, exactly the blocks that
// webapp.wire.parse_blocks gives, as dataclasses.asdict prints them in JSON (webapp/wire/parse.py and markup.py are
// the reference; tests/static/wire.test.mjs runs both on the same inputs). No imports, no network.

const FENCE = "```";
const UI_CLOSING = "\n</ui_passthrough>";
// `\d` is ASCII here and Unicode in Python: a digit beyond ASCII never prints back, so both give a raw block.
const UI_OPEN =
  /^<ui_passthrough type="([^"]*)"(?: title="([^"]*)")?(?: width="(full|half|third)")?(?: priority="(-?\d+)")?>$/u;
const FENCED = /^```([^`\n]*)\n(.*)\n```$/su;
const TOOL_ERROR = new RegExp(
  [
    '^<tool_error(?: code="(?<code>[^"]*)")?(?: severity="(?<severity>[^"]*)")?>\\n',
    "<message>(?<message>.*?)</message>\\n",
    "(?:<available_actions>(?<inline>[^\\n]*)</available_actions>\\n)?",
    "(?:<recovery>(?<recovery>.*?)</recovery>\\n)?",
    "(?:<available_actions>\\n(?<actions>(?:  <action>[^\\n]*</action>\\n)+)</available_actions>\\n)?",
    '(?:<details>\\n(?<details>(?:  <detail key="[^"]*">.*?</detail>\\n)+)</details>\\n)?',
    "(?:<retry_after>(?<retry>-?[0-9.e+\\-]+) seconds</retry_after>\\n)?",
    "</tool_error>$",
  ].join(""),
  "su",
);
const ACTION = /  <action>([^\n]*)<\/action>\n/gu;
const DETAIL = /  <detail key="([^"]*)">(.*?)<\/detail>\n/gsu;
const VALIDATION = new RegExp(
  [
    '^<validation_error action="(?<action>[^"]*)">\\n',
    '(?<fields>(?:<field name="[^"]*">.*?</field>\\n)*)',
    "<recovery>(?<recovery>.*?)</recovery>\\n</validation_error>$",
  ].join(""),
  "su",
);
const FIELD = /<field name="([^"]*)">(.*?)<\/field>\n/gsu;

const escapeText = (text) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;");
const unescapeText = (text) => text.replaceAll("&lt;", "<").replaceAll("&amp;", "&");
const escapeAttr = (text) =>
  escapeText(text).replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&apos;");
const unescapeAttr = (text) =>
  text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&apos;", "'")
    .replaceAll("&amp;", "&");

// Python's str() of the int a digit string gives (ints have no size limit there, so BigInt).
const intText = (digits) => BigInt(digits).toString();

// What Python's `_number` makes of a <retry_after> text, and the text `js_number` prints for it. Python keeps a
// digits-only text as an exact int of any size; other texts are floats, which print as JavaScript prints them. An
// envelope is exact only when this text is its own, so where the two ways differ (NaN, Infinity, integral floats)
// neither matches a text holding "e" or ".".
function retryNumber(text) {
  const value = Number(text);
  const integral = Number.isInteger(value) && !text.includes("e") && !text.includes(".");
  return { value, text: integral ? BigInt(value).toString() : String(value) };
}

// The items of a bulleted block. Joining them renders the text back (the opening's "- " cannot overlap the closing
// tag), so these blocks are always exact.
function splitItems(text, tag) {
  const opening = `<${tag}>\n- `;
  const closing = `\n</${tag}>`;
  if (!text.startsWith(opening) || !text.endsWith(closing)) return null;
  return text.slice(opening.length, text.length - closing.length).split("\n- ");
}

function parseRules(text, tag) {
  const items = splitItems(text, tag);
  return items === null ? null : { kind: tag, items };
}

function parseSuggestions(text) {
  const items = splitItems(text, "action_suggestions");
  if (items === null || items.some((item) => !item.includes(": "))) return null;
  const pairs = items.map((item) => {
    const at = item.indexOf(": ");
    return { tool: item.slice(0, at), reason: item.slice(at + 2) };
  });
  return { items: pairs, kind: "action_suggestions" };
}

function parseUi(text) {
  const newline = text.indexOf("\n");
  const first = newline < 0 ? text : text.slice(0, newline);
  const opening = UI_OPEN.exec(first);
  if (!opening || newline < 0 || !text.endsWith(UI_CLOSING) || text.length < first.length + UI_CLOSING.length + 1) {
    return null;
  }
  const content = text.slice(first.length + 1, text.length - UI_CLOSING.length);
  const fenced = FENCED.exec(content);
  const [, type, title, width, priority] = opening;
  const block = {
    type: unescapeAttr(type),
    title: title === undefined ? null : unescapeAttr(title),
    width: width ?? null,
    priority: priority === undefined ? null : Number(priority),
    lang: fenced ? fenced[1] : null,
    body: fenced ? fenced[2] : content,
    kind: "ui",
  };
  let attrs = `type="${escapeAttr(block.type)}"`;
  if (block.title) attrs += ` title="${escapeAttr(block.title)}"`;
  if (block.width !== null) attrs += ` width="${escapeAttr(block.width)}"`;
  if (priority !== undefined) attrs += ` priority="${intText(priority)}"`;
  const shown = block.lang === null ? block.body : `${FENCE}${block.lang}\n${block.body}\n${FENCE}`;
  return `<ui_passthrough ${attrs}>\n${shown}\n</ui_passthrough>` === text ? block : null;
}

function parseToolError(text) {
  const match = TOOL_ERROR.exec(text);
  if (!match) return null;
  const { code, severity, message, inline, recovery, actions, details, retry } = match.groups;
  const number = retry === undefined ? null : retryNumber(retry);
  const block = {
    code: code === undefined ? null : unescapeAttr(code),
    severity: severity === undefined ? null : unescapeAttr(severity),
    message: unescapeText(message),
    recovery: recovery === undefined ? null : unescapeText(recovery),
    available_actions:
      inline !== undefined
        ? unescapeText(inline).split(", ")
        : Array.from((actions ?? "").matchAll(ACTION), (found) => unescapeText(found[1])),
    actions_inline: inline !== undefined,
    details: Array.from((details ?? "").matchAll(DETAIL), (found) => [unescapeAttr(found[1]), unescapeText(found[2])]),
    retry_after: number === null ? null : number.value,
    kind: "tool_error",
  };
  return renderToolError(block, number) === text ? block : null;
}

function renderToolError(block, number) {
  let opening = "<tool_error";
  if (block.code !== null) opening += ` code="${escapeAttr(block.code)}"`;
  if (block.severity !== null) opening += ` severity="${escapeAttr(block.severity)}"`;
  const lines = [`${opening}>`, `<message>${escapeText(block.message)}</message>`];
  const actions = block.available_actions;
  if (actions.length && block.actions_inline) {
    lines.push(`<available_actions>${escapeText(actions.join(", "))}</available_actions>`);
  }
  if (block.recovery) lines.push(`<recovery>${escapeText(block.recovery)}</recovery>`);
  if (actions.length && !block.actions_inline) {
    lines.push("<available_actions>");
    for (const action of actions) lines.push(`  <action>${escapeText(action)}</action>`);
    lines.push("</available_actions>");
  }
  if (block.details.length) {
    lines.push("<details>");
    for (const [key, value] of block.details) {
      lines.push(`  <detail key="${escapeAttr(key)}">${escapeText(value)}</detail>`);
    }
    lines.push("</details>");
  }
  if (number !== null) lines.push(`<retry_after>${number.text} seconds</retry_after>`);
  lines.push("</tool_error>");
  return lines.join("\n");
}

function parseValidationError(text) {
  const match = VALIDATION.exec(text);
  if (!match) return null;
  const fields = Array.from(match.groups.fields.matchAll(FIELD), (found) => ({
    name: unescapeAttr(found[1]),
    text: unescapeText(found[2]),
  }));
  const block = {
    action: unescapeAttr(match.groups.action),
    fields,
    recovery: unescapeText(match.groups.recovery),
    kind: "validation_error",
  };
  const lines = [
    `<validation_error action="${escapeAttr(block.action)}">`,
    ...fields.map((field) => `<field name="${escapeAttr(field.name)}">${escapeText(field.text)}</field>`),
    `<recovery>${escapeText(block.recovery)}</recovery>`,
    "</validation_error>",
  ];
  return lines.join("\n") === text ? block : null;
}

function parseError(text) {
  if (text.startsWith("<tool_error")) return parseToolError(text);
  if (text.startsWith("<validation_error ")) return parseValidationError(text);
  return null;
}

function parseLater(text) {
  let block;
  if (text.startsWith("<ui_passthrough ")) block = parseUi(text);
  else if (text.startsWith("<llm_directives>\n")) block = parseRules(text, "llm_directives");
  else if (text.startsWith("<domain_rules>\n")) block = parseRules(text, "domain_rules");
  else if (text.startsWith("<action_suggestions>\n")) block = parseSuggestions(text);
  else block = parseError(text);
  return block ?? { text, kind: "raw" };
}

/**
 * Parse a result's text contents (strings, or MCP content items with a `text`): index 0 is the data block or an
 * error envelope, later ones are blocks. Each block is a plain object with a `kind`: data, raw, ui, llm_directives,
 * domain_rules, action_suggestions, tool_error or validation_error.
 */
export function parseBlocks(texts) {
  return Array.from(texts, (item, index) => {
    const text = typeof item === "string" ? item : String(item.text);
    return index === 0 ? (parseError(text) ?? { text, kind: "data" }) : parseLater(text);
  });
}
