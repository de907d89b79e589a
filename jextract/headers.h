/* The rdma-core API that jextract/regenerate turns into dev.verbs4j.bindings. */
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
