// The stock table: NiceGUI's q-table wrapper plus patchRows, so one changed row is sent as one row, not the table.
import { convertDynamicProperties } from "../../static/utils/dynamic_properties.js";

export default {
  template: `
    <q-table ref="qRef" :columns="convertedColumns" :rows="shown" :row-key="rowKey">
      <template v-for="(_, slot) in $slots" v-slot:[slot]="slotProps">
        <slot :name="slot" v-bind="slotProps || {}" />
      </template>
    </q-table>
  `,
  props: {
    columns: Array,
    rows: Array,
    rowKey: String,
  },
  data() {
    return { shown: this.rows };
  },
  watch: {
    rows(rows) {
      this.shown = rows; // a whole-table update from the server replaces any patches
    },
  },
  computed: {
    convertedColumns() {
      this.columns.forEach((column) => convertDynamicProperties(column, false));
      return this.columns;
    },
  },
  methods: {
    patchRows(changed, removed) {
      const gone = new Set(removed);
      const byKey = new Map(changed.map((row) => [row[this.rowKey], row]));
      const rows = this.shown.filter((row) => !gone.has(row[this.rowKey]));
      const patched = rows.map((row) => byKey.get(row[this.rowKey]) ?? row);
      const known = new Set(rows.map((row) => row[this.rowKey]));
      this.shown = patched.concat(changed.filter((row) => !known.has(row[this.rowKey])));
    },
  },
};
