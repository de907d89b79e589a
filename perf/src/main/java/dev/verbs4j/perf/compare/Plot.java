package dev.verbs4j.perf.compare;

import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.plot.ValueMarker;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.List;

/**
 * The ratios as a PNG line chart (JFreeChart, headless): one line per tool over the message size
 * (log2 axis), the ratio on a log axis, with the parity line at 1 and the bounds (dashed) when given.
 */
final class Plot {

    static final int WIDTH = 1100;
    static final int HEIGHT = 650;

    /** Eight colours that stay apart on white. */
    private static final Color[] PALETTE = {
        new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e),
        new Color(0x9467bd), new Color(0x8c564b), new Color(0xe377c2), new Color(0x17becf),
    };

    private Plot() {
    }

    static void writePng(List<Result> results, Path file, double min, double max) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYSeriesCollection data = new XYSeriesCollection();
        for (Tool t : results.stream().map(Result::tool).distinct().toList()) {
            XYSeries s = new XYSeries(t.program());
            for (Result r : results) {
                if (r.tool() == t && !Double.isNaN(r.ratio())) {
                    s.add(r.size(), r.ratio());
                }
            }
            data.addSeries(s);
        }
        LogAxis x = new LogAxis("message size [bytes] (atomic tools: 8 B only)");
        x.setBase(2);
        x.setTickUnit(new NumberTickUnit(1, new DecimalFormat("0")));
        x.setNumberFormatOverride(new DecimalFormat("0"));
        LogAxis y = new LogAxis("Java slowdown: latency Java/C, bandwidth C/Java (>1 = Java slower)");
        y.setBase(2);
        y.setSmallestValue(1e-3);
        y.setTickUnit(new NumberTickUnit(0.5, new DecimalFormat("0.##")));
        y.setNumberFormatOverride(new DecimalFormat("0.##"));
        // the range always shows the parity line and the bounds, with a margin
        double lo = 1;
        double hi = 1;
        for (Result r : results) {
            if (!Double.isNaN(r.ratio())) {
                lo = Math.min(lo, r.ratio());
                hi = Math.max(hi, r.ratio());
            }
        }
        if (max < Double.POSITIVE_INFINITY) {
            hi = Math.max(hi, max);
        }
        if (min > 0) {
            lo = Math.min(lo, min);
        }
        y.setRange(lo / 1.25, hi * 1.25);
        XYLineAndShapeRenderer renderer = new XYLineAndShapeRenderer(true, true);
        for (int i = 0; i < data.getSeriesCount(); i++) {
            renderer.setSeriesPaint(i, PALETTE[i % PALETTE.length]);
            renderer.setSeriesStroke(i, new BasicStroke(2f));
        }
        XYPlot plot = new XYPlot(data, x, y, renderer);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        plot.addRangeMarker(new ValueMarker(1, Color.BLACK, new BasicStroke(1.5f)));
        if (max < Double.POSITIVE_INFINITY) {
            plot.addRangeMarker(bound(max));
        }
        if (min > 0) {
            plot.addRangeMarker(bound(min));
        }
        JFreeChart chart = new JFreeChart("verbs4j compare: Java tools against perftest 4.5 (C), same device and options",
                JFreeChart.DEFAULT_TITLE_FONT, plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        Path dir = file.toAbsolutePath().getParent();
        if (dir != null) {
            Files.createDirectories(dir);
        }
        ChartUtils.saveChartAsPNG(file.toFile(), chart, WIDTH, HEIGHT);
    }

    /** A bound: a dashed dark red line. */
    private static ValueMarker bound(double at) {
        return new ValueMarker(at, new Color(0x990000), new BasicStroke(1.5f, BasicStroke.CAP_BUTT,
                BasicStroke.JOIN_MITER, 10f, new float[] {8f, 6f}, 0f));
    }
}
