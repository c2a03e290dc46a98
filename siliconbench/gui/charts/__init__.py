"""Live charts (pyqtgraph): the drawing of what siliconbench.gui.chart_series selects and
names, a module per concern: axes (the y axis in human units, log2 size and category x axes,
series markers, plot_widget), legend, chart (the Chart every tab draws on), curve (a metric
over its point: GEMM, bandwidth, an LLM's prefill and decode), bars (throughput by model, the
Compare tab's sides), scaling, telemetry, panel (the window's chart tabs) and export (a chart
to PNG or SVG). Nothing is imported here: each importer names the module it needs."""
