// The component method calls of one change, run by nicegui.js once it has applied the update message that carries
// them (the element's update method): a change is one socket message with the element updates that go with it. A tab
// that missed a batch says so through another element of this component (`signal`), which is never updated: its
// listener does not travel in every message.
export default {
  template: "<span hidden></span>",
  props: { calls: String, batch: Number, signal: Number },
  data() {
    return { ran: 0 }; // the last batch run
  },
  methods: {
    run() {
      const batch = this.batch ?? 0;
      if (batch <= this.ran) return; // run already: a replayed message after a reconnect
      const missed = this.ran > 0 && batch > this.ran + 1; // a replayed message carries the newest batch, not its own
      this.ran = batch;
      const later = [];
      for (const [id, name, args, atFrame] of JSON.parse(this.calls ?? "[]")) {
        if (atFrame) later.push([id, name, args]);
        else runMethod(id, name, args);
      }
      // Drawing calls wait for the next frame: the tab answers the change's confirmation first.
      if (later.length) requestAnimationFrame(() => later.forEach(([id, name, args]) => runMethod(id, name, args)));
      if (missed) runMethod(this.signal, "gap", []); // the server sends every part's whole state again
    },
    gap() {
      this.$emit("gap");
    },
  },
};
