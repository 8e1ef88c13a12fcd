// What both test hosts record of a view through its AppBridge: the messages it sends (answered at once, or never
// with `hang`), the model context it updates, the links it opens and the sizes it asks for (the frame follows).
export function record(bridge, frame, received, hang = false) {
  bridge.onmessage = (params) => (received.messages.push(params), hang ? new Promise(() => {}) : Promise.resolve({}));
  bridge.onupdatemodelcontext = async (params) => (received.contexts.push(params), {});
  bridge.onopenlink = async ({ url }) => (received.links.push(url), {});
  bridge.onsizechange = ({ height }) => {
    received.sizes.push(height);
    frame.style.height = `${height}px`;
  };
}
