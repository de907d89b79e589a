package dev.verbs4j.tools;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The tools' log for operators: one line per event,
 * {@code 2026-11-25T13:05:04.123Z INFO  NaaServer: message} (UTC time to the millisecond, level,
 * the logger's simple name, the message), a throwable's stack trace on the lines after it. The
 * library logs through {@code System.Logger}, which reaches {@code java.util.logging} by default;
 * {@link Cli#main} installs this format on its root logger, and {@code -v} / {@code -q} of the tools
 * that have them {@linkplain #verbosity(int) set the level}.
 */
public final class OperatorLog {

    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);
    // the root logger of java.util.logging, held so that its configuration stays
    private static final Logger ROOT = Logger.getLogger("");
    private static Handler installed;

    private OperatorLog() {
    }

    /**
     * Sends every log record at {@code INFO} and above to {@code stream}, one line each, in place of
     * the root logger's handlers.
     */
    public static synchronized void install(PrintStream stream) {
        for (Handler h : ROOT.getHandlers()) {
            ROOT.removeHandler(h);
        }
        installed = new LineHandler(stream);
        ROOT.addHandler(installed);
        level(Level.INFO);
    }

    /**
     * The level of the installed log: {@code -1} (-q) warnings and errors only, {@code 0} from
     * {@code INFO} up, {@code 1} (-v) {@code DEBUG} as well, {@code 2} and more everything. Does
     * nothing when no log is {@linkplain #install installed} (a tool run in-process).
     */
    public static synchronized void verbosity(int verbosity) {
        if (installed != null) {
            level(verbosity < 0 ? Level.WARNING : verbosity == 0 ? Level.INFO : verbosity == 1 ? Level.FINE : Level.ALL);
        }
    }

    /** Removes the installed log and the root logger's level, leaving java.util.logging's defaults. */
    static synchronized void uninstall() {
        if (installed != null) {
            ROOT.removeHandler(installed);
            installed = null;
        }
        try {
            java.util.logging.LogManager.getLogManager().readConfiguration();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void level(Level level) {
        ROOT.setLevel(level);
        installed.setLevel(level);
    }

    /** The level's name in a log line: the names of {@code System.Logger.Level}. */
    static String levelName(Level level) {
        int v = level.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return "ERROR";
        } else if (v >= Level.WARNING.intValue()) {
            return "WARN";
        } else if (v >= Level.INFO.intValue()) {
            return "INFO";
        } else if (v >= Level.FINE.intValue()) {
            return "DEBUG";
        }
        return "TRACE";
    }

    /** The one-line format. */
    public static final class LineFormatter extends Formatter {

        @Override
        public String format(LogRecord r) {
            String name = r.getLoggerName() == null || r.getLoggerName().isEmpty() ? "root" : r.getLoggerName();
            String message = formatMessage(r);
            StringBuilder s = new StringBuilder(96)
                    .append(TIME.format(r.getInstant())).append(' ')
                    .append(String.format("%-5s", levelName(r.getLevel()))).append(' ')
                    .append(name.substring(name.lastIndexOf('.') + 1)).append(": ")
                    .append(message == null ? "" : message.replace("\r\n", " ").replace('\n', ' ').replace('\r', ' '))
                    .append(System.lineSeparator());
            if (r.getThrown() != null) {
                StringWriter w = new StringWriter();
                r.getThrown().printStackTrace(new PrintWriter(w));
                s.append(w);
            }
            return s.toString();
        }
    }

    /** Writes each record at once, so that lines of threads do not interleave and none is lost at exit. */
    private static final class LineHandler extends Handler {

        private final PrintStream stream;

        LineHandler(PrintStream stream) {
            this.stream = stream;
            setFormatter(new LineFormatter());
        }

        @Override
        public void publish(LogRecord r) {
            if (!isLoggable(r)) {
                return;
            }
            String line = getFormatter().format(r);
            synchronized (stream) {
                stream.print(line);
                stream.flush();
            }
        }

        @Override
        public void flush() {
            stream.flush();
        }

        @Override
        public void close() {
            flush();
        }
    }
}
