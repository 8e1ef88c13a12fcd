// One KPI card's figure: its text is data (the `text` prop, the server's copy for a tab built later); a change sets it
// with `show`, one of the change's method calls, so the figure renders again and no element update travels.
export default {
  template: "<div>{{ shown }}</div>",
  props: { text: String },
  data() {
    return { shown: this.text };
  },
  watch: {
    text(text) {
      this.shown = text;
    },
  },
  methods: {
    show(text) {
      this.shown = text;
    },
  },
};
