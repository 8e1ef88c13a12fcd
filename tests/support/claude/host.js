// A host with Claude's frame policy for the tests, built on the ext-apps SDK's AppBridge: the resource's HTML goes
// to a sandbox page on another origin (served with Claude's CSP as a header, built from the resource's declared
// domains as Claude filters them), which writes it into an inner frame. `frameDomains` is ignored, as Claude does.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { record } from "../harness/record.js";

const received = { messages: [], contexts: [], links: [], sizes: [], toolResultAt: [], toolCalls: [] };
const shown = [];
let released = null; // with calls "late": the first call waits for `release()`

// How the host carries the view's own tool calls to the server (`window.harnessCallTool`, the test's MCP client):
// "forward" several at once, "serial" one at a time (a host that serializes app calls), "late" answers once the test
// releases them (an approval prompt: until then the host never answers), "none" offers no serverTools at all.
const carry = (calls) => {
  let chain = Promise.resolve();
  const forward = (params) => {
    received.toolCalls.push({ name: params.name, at: performance.now(), args: params.arguments });
    return window.harnessCallTool(params);
  };
  if (calls === "serial") return (params) => (chain = chain.catch(() => null).then(() => forward(params)));
  if (calls === "late") {
    const gate = new Promise((resolve) => (released = resolve));
    return (params) => gate.then(() => forward(params));
  }
  return forward;
};

const sandboxUrl = (origin, csp, keepHttp, honourFrames) => {
  const kept = (list) =>
    (list || []).filter((entry) => /^(https|wss):\/\//.test(entry) || (keepHttp && /^(http|ws):\/\//.test(entry)));
  const query = new URLSearchParams({
    "resource-src": kept(csp.resourceDomains).join(" "),
    "connect-src": kept(csp.connectDomains).join(" "),
  });
  if (honourFrames) query.set("frame-src", (csp.frameDomains || []).join(" ")); // a host that does (the benchmark)
  return `${origin}/mcp_apps?${query}`;
};

async function show({ html, csp, input, result, sandboxOrigin, keepHttp, opaque, theme, honourFrames, calls }) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  frame.setAttribute("allow", "fullscreen *; clipboard-write *");
  frame.style.cssText = "display: block; width: 100%; height: 500px; border: 0; visibility: hidden";
  const index = shown.length;
  frame.dataset.index = String(index);
  const ready = new Promise((resolve) =>
    window.addEventListener("message", function listen(event) {
      if (event.source === frame.contentWindow && event.data && event.data.claudeSandbox === "ready") {
        window.removeEventListener("message", listen);
        resolve();
      }
    }),
  );
  frame.src = sandboxUrl(sandboxOrigin, csp, keepHttp, honourFrames);
  document.body.appendChild(frame);
  await ready;
  const tools = calls && calls !== "none" ? { serverTools: {} } : {};
  const bridge = new AppBridge(
    null,
    { name: "Claude-policy harness", version: "1.0.0" },
    { openLinks: {}, message: { text: {} }, updateModelContext: { text: {} }, ...tools },
    { hostContext: { theme, displayMode: "inline", availableDisplayModes: ["inline"] } },
  );
  record(bridge, frame, received);
  if (calls && calls !== "none") bridge.oncalltool = carry(calls);
  bridge.oninitialized = async () => {
    frame.style.visibility = "visible"; // as Claude, only once the view said it is initialized
    received.toolResultAt[index] = performance.timeOrigin + performance.now(); // comparable across frames
    await bridge.sendToolInput({ arguments: input });
    await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  const sandbox = opaque ? "allow-scripts" : "allow-scripts allow-same-origin allow-forms";
  frame.contentWindow.postMessage({ claudeSandbox: "html", html, sandbox, srcdoc: !!honourFrames }, "*");
  shown.push({ frame, bridge });
}

const violations = (index) =>
  new Promise((resolve) => {
    const frame = shown[index].frame;
    window.addEventListener("message", function listen(event) {
      if (event.source === frame.contentWindow && event.data && event.data.claudeSandbox === "violations") {
        window.removeEventListener("message", listen);
        resolve(event.data.violations);
      }
    });
    frame.contentWindow.postMessage({ claudeSandbox: "violations" }, "*");
  });

window.harness = { received, show, violations, release: () => released && released() };
