// The stock table: NiceGUI's q-table wrapper plus patchRows, so one changed row is sent as one row, not the table.
// The rows are this file's template: a slot template added from Python is a new component on every render of the
// table, so each of its cells would be unmounted and mounted again on every change.
import { convertDynamicProperties } from "../../static/utils/dynamic_properties.js";

// One formatter each for the whole table: `toLocaleString` with options builds a new one on every call, and a
// render of the table formats every number cell again.
const NUMBER = new Intl.NumberFormat("en-US");
const CENTS = new Intl.NumberFormat("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const FORMATS = {
  number: (value) => NUMBER.format(value),
  money: (value) => "€" + CENTS.format(value / 100),
};

// One row: a component of its own, so a change re-renders the rows it touched and nothing else (QTable's own rows
// are components per cell, all rendered again on any change of the table).
const StockRow = {
  props: { row: Object, columns: Array },
  emits: ["pick", "unpick"],
  // a row is reached with Tab: Enter (or Space) opens its item, Escape closes it
  template: `
    <tr :class="{ 'row-selected': row.selected, 'row-low': row.low_stock }" tabindex="0"
        :aria-selected="row.selected ? 'true' : 'false'" @click="$emit('pick', $event, row)"
        @keydown.enter.self.prevent="$emit('pick', $event, row)" @keydown.space.self.prevent="$emit('pick', $event, row)"
        @keydown.esc.self="$emit('unpick')">
      <td v-for="column in columns" :key="column.name" :class="column.cellClass">
        <span v-if="column.name === 'available' && row.low_stock" class="low-badge text-sm font-medium"
              :title="'Below the reorder point of ' + row.reorder_point">{{ column.format(row.available) }}</span>
        <template v-else>{{ column.format ? column.format(row[column.field]) : row[column.field] }}</template>
      </td>
    </tr>
  `,
};

export default {
  components: { StockRow },
  template: `
    <q-table ref="qRef" :columns="convertedColumns" :rows="shown" :row-key="rowKey" :pagination="paged"
             @update:pagination="sort">
      <template v-slot:body="props">
        <stock-row :key="props.key" :row="props.row" :columns="convertedColumns" @pick="pick"
                   @unpick="$emit('rowEscape')" />
      </template>
    </q-table>
  `,
  // The sort is the tab's own (the server keeps a copy of what it reports, without sending the table back).
  emits: ["update:pagination"],
  props: {
    columns: Array,
    rows: Array,
    rowKey: String,
    pagination: Object,
  },
  data() {
    return { shown: this.rows, paged: this.pagination };
  },
  watch: {
    rows(rows) {
      this.shown = rows; // a whole-table update from the server replaces any patches
    },
    pagination(pagination) {
      this.paged = pagination;
    },
  },
  computed: {
    convertedColumns() {
      this.columns.forEach((column) => {
        convertDynamicProperties(column, false);
        if (column.formatter) column.format = FORMATS[column.formatter];
        column.cellClass = `q-td text-${column.align}${column.classes ? " " + column.classes : ""}`;
      });
      return this.columns;
    },
  },
  methods: {
    sort(pagination) {
      this.paged = pagination;
      this.$emit("update:pagination", pagination);
    },
    pick(event, row) {
      this.$emit("rowClick", event, row);
    },
    setRows(rows) {
      this.shown = rows;
    },
    patchRows(changed, removed) {
      // A row shown already is changed in place: only its StockRow renders again (the table itself only when rows
      // come or go, or when the column it is sorted by changed).
      const shown = new Map(this.shown.map((row) => [row[this.rowKey], row]));
      const added = changed.filter((row) => {
        const known = shown.get(row[this.rowKey]);
        if (known) Object.assign(known, row);
        return !known;
      });
      if (removed.length || added.length) {
        const gone = new Set(removed);
        this.shown = this.shown.filter((row) => !gone.has(row[this.rowKey])).concat(added);
      }
    },
  },
};
