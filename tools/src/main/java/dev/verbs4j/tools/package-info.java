/**
 * What every tool shares: the option parser ({@link dev.verbs4j.tools.Getopt}, spelled as
 * {@code getopt_long(3)}), the size syntax of the Java-only tools ({@link dev.verbs4j.tools.Sizes}),
 * the entry point ({@link dev.verbs4j.tools.Cli}: {@code run} returns the exit status, {@code main}
 * alone exits) and the one-line operator log ({@link dev.verbs4j.tools.OperatorLog}).
 */
package dev.verbs4j.tools;
