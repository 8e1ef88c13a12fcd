// The component method calls of one change, run by nicegui.js once it has applied the update message that carries
// them (the element's update method): a change is one socket message with the element updates that go with it.
export default {
  template: "<span hidden></span>",
  props: { calls: Array },
  methods: {
    run() {
      for (const [id, name, args] of this.calls ?? []) runMethod(id, name, args);
    },
  },
};
