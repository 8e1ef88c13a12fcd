// A call's confirmation in its tab: nicegui.js calls confirm() once it has applied the update message that carries
// a new `ask` (the DOM patched), so a change and its confirmation travel as one message and get one answer.
export default {
  template: "<span hidden></span>",
  props: { ask: Number },
  methods: {
    confirm() {
      if (this.ask) this.$emit("confirmed", this.ask);
    },
  },
};
