// The stock table: NiceGUI's q-table wrapper plus patchRows, so one changed row is sent as one row, not the table.
// The "available" cell is part of this template: a slot template added from Python is a new component on every
// render of the table, so each of its cells would be unmounted and mounted again on every change.
import { convertDynamicProperties } from "../../static/utils/dynamic_properties.js";

// One formatter each for the whole table: `toLocaleString` with options builds a new one on every call, and a
// render of the table formats every number cell again.
const NUMBER = new Intl.NumberFormat("en-US");
const CENTS = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const FORMATS = {
  number: (value) => NUMBER.format(value),
  money: (value) => "€" + CENTS.format(value / 100),
};

export default {
  template: `
    <q-table ref="qRef" :columns="convertedColumns" :rows="shown" :row-key="rowKey">
      <template v-slot:body-cell-available="props">
        <q-td :props="props">
          <q-badge v-if="props.row.low_stock" color="amber-2" text-color="amber-10" class="text-sm font-medium px-2"
                   :label="props.value">
            <q-tooltip>Below the reorder point of {{ props.row.reorder_point }}</q-tooltip>
          </q-badge>
          <span v-else>{{ props.value }}</span>
        </q-td>
      </template>
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
      this.columns.forEach((column) => {
        convertDynamicProperties(column, false);
        if (column.formatter) column.format = FORMATS[column.formatter];
      });
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
