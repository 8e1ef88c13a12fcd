// A small MCP Apps host for the tests, built on the ext-apps SDK's AppBridge: it renders a ui:// resource in a
// frame, hands it the opening tool's input and result, and records what the view asks of it. `framesHonoured: false`
// gives the frame a policy that ignores the resource's frame domains, as Claude's sandbox does; `hang: true` makes
// it never answer a message (the view's request must end on its own). `result: null` holds the result back until
// `sendResult(index, result)`; `setContext(index, context)` changes the host context (theme, style variables).
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { record } from "./record.js";

const received = { messages: [], contexts: [], links: [], sizes: [], violations: [] };
const shown = [];

const policy = (csp, framesHonoured) => {
  const frames = framesHonoured ? (csp.frameDomains || []).join(" ") : "'self' blob: data:";
  return `default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; frame-src ${frames}`;
};

async function show({ html, csp, input, result, framesHonoured, theme, hang, variables, tool }) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  frame.style.cssText = "display: block; width: 100%; height: 500px; border: 0";
  frame.dataset.index = String(shown.length);
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp, framesHonoured)}">`;
  const index = shown.length;
  const recorder = `<script>document.addEventListener("securitypolicyviolation", (e) =>
    parent.harness.received.violations.push({ index: ${index}, directive: e.effectiveDirective, uri: e.blockedURI }))
  </script>`; // every content security policy violation in the frame, for the tests to see
  frame.srcdoc = html.replace("<head>", `<head>${meta}${recorder}`);
  document.body.appendChild(frame);
  const bridge = new AppBridge(
    null,
    { name: "Harness host", version: "1.0.0" },
    { openLinks: {}, message: { text: {} }, updateModelContext: { text: {} } },
    {
      hostContext: {
        theme,
        displayMode: "inline",
        availableDisplayModes: ["inline"],
        ...(variables ? { styles: { variables } } : {}),
        ...(tool ? { toolInfo: { tool: { name: tool, inputSchema: { type: "object" } } } } : {}),
      },
    },
  );
  record(bridge, frame, received, hang);
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: input });
    if (result !== null) await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  shown.push({ frame, bridge });
}

async function tearDown(index) {
  const { frame, bridge } = shown[index];
  await bridge.teardownResource({});
  frame.remove();
}

const sendResult = (index, result) => shown[index].bridge.sendToolResult(result);
const setContext = (index, context) => shown[index].bridge.setHostContext(context);

window.harness = { received, show, tearDown, sendResult, setContext };
