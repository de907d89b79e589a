/** A program that uses verbs4j as a library. */
module com.example.downstream {
    requires dev.verbs4j.rdmacm; // and, transitively, dev.verbs4j.verbs
}
