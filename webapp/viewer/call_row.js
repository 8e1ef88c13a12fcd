// One row of the viewer's live list, drawn from its properties (text only): one element per call on the server.
export default {
  template: `
    <div>
      <div class="wv-call-line">
        <span :class="'wv-dot wv-dot-' + status"></span>
        <span class="wv-call-tool">{{ tool }}</span>
        <span class="wv-call-duration">{{ duration }}</span>
      </div>
      <div class="wv-call-line wv-call-meta">
        <span class="wv-call-time">{{ time }}</span>
        <span class="wv-call-caller">{{ caller }}</span>
        <span v-if="view" class="wv-call-view">view {{ view }}</span>
        <span v-if="worker" class="wv-call-worker">worker {{ worker }}</span>
      </div>
    </div>
  `,
  props: {
    status: String,
    tool: String,
    duration: String,
    time: String,
    caller: String,
    view: String,
    worker: String,
  },
};
