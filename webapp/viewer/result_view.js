// A result, a call's detail or a JSON value, drawn in the browser by the viewer's bundle (static/viewer/main.js) from
// what the server sent: the call's (masked) wire texts and metadata. The server builds no element per block.
export default {
  template: "<div></div>",
  props: {
    bundle: String,
    mode: { type: String, default: "result" },
    texts: Array,
    call: Object,
    value: null,
    suggest: Boolean,
  },
  mounted() {
    this.draw();
  },
  beforeUnmount() {
    this.generation = (this.generation || 0) + 1;
    if (this.viewer) {
      for (const drawn of this.$el.querySelectorAll(".wv-render")) this.viewer.clearBlocks(drawn);
      this.viewer.clearBlocks(this.$el);
    }
  },
  watch: {
    texts() {
      this.draw();
    },
    call() {
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
      const theme = document.body.classList.contains("body--dark") ? "dark" : "light";
      const suggest = this.suggest ? (tool) => this.$emit("suggest", tool) : null;
      this.$el.dataset.state = "drawing";
      if (this.mode === "json") this.viewer.renderJson(this.$el, this.value, { theme });
      else if (this.mode === "call") await this.viewer.showCall(this.$el, this.call, { theme, suggest });
      else await this.viewer.renderResult(this.$el, this.texts, { theme, suggest });
      if (generation === this.generation) this.$el.dataset.state = "drawn";
    },
  },
};
