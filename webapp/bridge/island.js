// A component boundary: NiceGUI renders a plain element inside its nearest component's render, so an update of a
// child re-renders that component's whole subtree (slots are never stable). Inside an island, it re-renders the
// island alone.
export default {
  template: "<div><slot></slot></div>",
};
