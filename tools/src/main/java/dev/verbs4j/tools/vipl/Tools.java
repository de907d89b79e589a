package dev.verbs4j.tools.vipl;

import dev.verbs4j.vipl.VipException;

import java.io.PrintStream;

/**
 * The common frame of the VIPL tools: option parsing, usage, the {@link Endpoint}'s life and the
 * mapping of failures to exit statuses (1 at run time, 2 for bad options). Holds no state.
 */
final class Tools {

    /** One side's body, given the open endpoint. */
    @FunctionalInterface
    interface Side {
        void run(Endpoint e, PrintStream out);
    }

    private Tools() {
    }

    static int run(boolean bw, String[] args, PrintStream out, PrintStream err, Side server, Side client) {
        String program = bw ? "vipl-bw" : "vipl-pingpong";
        ToolOptions o;
        try {
            o = ToolOptions.parse(bw, args, err);
        } catch (ToolOptions.UsageException e) {
            if (e.getMessage() != null) {
                err.println(program + ": " + e.getMessage());
            }
            err.println("Try '" + program + " --help' for more information.");
            return 2;
        }
        if (o.help) {
            out.print(ToolOptions.usage(bw));
            out.flush();
            return 0;
        }
        try (Endpoint e = new Endpoint(o)) {
            try {
                (o.isServer() ? server : client).run(e, out);
            } catch (Endpoint.Failure f) {
                throw e.withAsyncErrors(f);
            }
            out.flush();
            return 0;
        } catch (ToolOptions.UsageException e) {
            err.println(program + ": " + e.getMessage());
            return 2;
        } catch (Endpoint.Failure | VipException e) {
            out.flush();
            err.println(program + ": " + e.getMessage());
            return 1;
        } catch (RuntimeException | OutOfMemoryError e) {
            out.flush();
            err.println(program + ": " + e);
            return 1;
        }
    }
}
