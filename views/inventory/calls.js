// The component method calls of one change, run by nicegui.js once it has applied the update message that carries
// them (the element's update method): a change is one socket message with the element updates that go with it.
export default {
  template: "<span hidden></span>",
  props: { calls: String },
  methods: {
    run() {
      const later = [];
      for (const [id, name, args, atFrame] of JSON.parse(this.calls ?? "[]")) {
        if (atFrame) later.push([id, name, args]);
        else runMethod(id, name, args);
      }
      // Drawing calls wait for the next frame: the tab answers the change's confirmation first.
      if (later.length) requestAnimationFrame(() => later.forEach(([id, name, args]) => runMethod(id, name, args)));
    },
  },
};
