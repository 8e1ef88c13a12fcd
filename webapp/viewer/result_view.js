// A result, or a JSON value, drawn in the browser by the viewer's bundle (static/viewer/main.js) from what the server
// sent: the call's (masked) wire texts. The server builds no element per block.
export default {
  template: "<div></div>",
  props: {
    bundle: String,
    texts: Array,
    value: null,
    mode: { type: String, default: "result" },
    raw: Boolean,
    suggest: Boolean,
  },
  mounted() {
    this.draw();
  },
  beforeUnmount() {
    this.generation = (this.generation || 0) + 1;
    if (this.viewer) this.viewer.clearBlocks(this.$el);
  },
  watch: {
    texts() {
      this.draw();
    },
    raw() {
      this.draw();
    },
    value() {
      this.draw();
    },
  },
  methods: {
    async draw() {
      const generation = (this.generation = (this.generation || 0) + 1);
      this.viewer = this.viewer || (await import(this.bundle));
      if (generation !== this.generation) return;
      const dark = document.body.classList.contains("body--dark");
      this.$el.dataset.state = "drawing";
      if (this.mode === "json") {
        this.viewer.renderJson(this.$el, this.value, { theme: dark ? "dark" : "light" });
      } else {
        const suggest = this.suggest ? (tool) => this.$emit("suggest", tool) : null;
        await this.viewer.renderResult(this.$el, this.texts, { raw: this.raw, theme: dark ? "dark" : "light", suggest });
      }
      if (generation === this.generation) this.$el.dataset.state = "drawn";
    },
  },
};
