// The feed of recent movements: rows as data, drawn by this template (text only: nothing in a row is markup), newest
// first. A change prepends its rows (`prepend`, sent with the change's message) and the oldest fall off; the rows
// already shown are not rendered again (v-memo on the movement's id). A row carries what differs between movements;
// how an actor is drawn is here.
const ACTORS = {
  agent: { icon: "smart_toy", label: "Agent", color: "bg-violet-100 text-violet-700" },
  person: { icon: "person", label: "Person", color: "bg-sky-100 text-sky-700" },
};

export default {
  template: `
    <div>
      <div v-if="!shown.length" class="text-sm text-gray-500 py-4">No movements yet.</div>
      <div v-for="row in shown" :key="row.id" v-memo="[row.id]" :data-actor="row.actor"
           class="w-full flex items-center gap-3 flex-nowrap py-2 border-b border-gray-100 last:border-0">
        <div :class="['rounded-full p-1.5 shrink-0', actor(row).color]">
          <i class="q-icon notranslate material-icons" aria-hidden="true" style="font-size: 16px">{{ actor(row).icon }}</i>
        </div>
        <div class="flex flex-col grow min-w-0 overflow-hidden">
          <div class="flex items-baseline gap-2 flex-nowrap">
            <span class="font-mono text-xs text-gray-700">{{ row.sku }}</span>
            <span :class="['text-sm font-semibold', tone(row)]">{{ row.delta }}</span>
            <span class="text-xs text-gray-500">→ {{ row.after }}</span>
          </div>
          <div class="w-full text-xs text-gray-500 truncate" :title="row.reason">{{ row.reason }}</div>
        </div>
        <div class="flex flex-col items-end shrink-0">
          <span :class="['text-[10px] uppercase tracking-wide font-semibold rounded px-1.5', actor(row).color]">
            {{ actor(row).label }}
          </span>
          <span class="text-[11px] text-gray-500 whitespace-nowrap">{{ row.time }}</span>
        </div>
      </div>
    </div>
  `,
  props: { rows: Array, size: Number },
  data() {
    return { shown: this.rows };
  },
  watch: {
    rows(rows) {
      this.shown = rows; // the whole feed from the server replaces what was prepended
    },
  },
  methods: {
    actor(row) {
      return ACTORS[row.actor];
    },
    tone(row) {
      return row.delta.startsWith("+") ? "text-emerald-700" : "text-rose-700"; // an addition, or a taking
    },
    setRows(rows) {
      this.shown = rows;
    },
    prepend(rows) {
      const known = new Set(this.shown.map((row) => row.id));
      this.shown = rows.filter((row) => !known.has(row.id)).concat(this.shown).slice(0, this.size);
    },
  },
};
