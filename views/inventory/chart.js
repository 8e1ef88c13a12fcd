// The stock chart: ECharts from NiceGUI's own bundle, drawn without NiceGUI's echart component's event wiring. After
// a draw, ECharts' render loop sleeps after one still frame instead of ten: each of those frames costs a watching tab
// a main-frame update, and the chart draws (at most once a second) with every change it shows.
import { echarts } from "nicegui-echart";

export default {
  template: "<div></div>",
  props: { options: Object },
  mounted() {
    this.chart = echarts.init(this.$el);
    this.chart.getZr().setSleepAfterStill(1);
    this.resizeObserver = new ResizeObserver(() => this.chart.resize());
    this.resizeObserver.observe(this.$el);
    this.update_chart();
  },
  beforeUnmount() {
    this.resizeObserver.disconnect();
    this.chart.dispose();
  },
  methods: {
    update_chart() {
      this.chart?.setOption(this.options, { notMerge: true });
    },
    run_chart_method(name, ...args) {
      return this.chart[name](...args);
    },
  },
};
